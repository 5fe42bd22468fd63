#!/bin/bash
# Session 64, device call 5 (asked of an H200: the tool asks for one after a refused start):
# d924432's build (.devbin/s64, the kernels of session 63's final build). 1. decode 1x32k 32/4 and
# 32/8, bf16 and fp8, pages 16/64/128, two rounds (the fp8/bf16 ratio under session 63's split
# rule); 2. gpu_check's tests, conformance and runs (the sanitizers ran on an H100 in call 2).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s64/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2; do
  timeout 60 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --out $OUT/l32k_r$r.jsonl > $OUT/l32k_r$r.log 2>&1
  echo "1x32k r$r rc=$? ${SECONDS}s" >> $S
done
timeout 400 bash scripts/gpu_check.sh --no-build --steps=tests,conformance,runs $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests,conformance,runs rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/g/tests.log | head -5 | tr '\n' ';') $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/g/conformance.log | cut -c1-100 | tr '\n' ';') ${SECONDS}s" >> $S
tail -25 $OUT/gpu_check.txt >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log g gpu_check.txt
