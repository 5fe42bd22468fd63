#!/bin/bash
# Session 64, device call 1: HEAD's build (71a2584 + the bench's --seed / cuda --sequential-blocks).
# 1. Layout study: decode 1x32k GQA 32/4, bf16 and fp8 caches, pages 16/64/128, at five seeds of
# the shuffled block tables and inputs (row seeds S..S+5) and with sequential block tables, two
# rounds: is fp8's page-64 shortfall (1.58x) a property of one layout? 2. gpu_check's tests and
# conformance on this build (171944b / 7f2f7eb's host refactor has not run on a GPU).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s64/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2; do for sd in 100 1000 2000 3000 4000 seq; do
  a="--seed $sd"; [ $sd = seq ] && a="--sequential-blocks"
  timeout 60 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4 $a --out $OUT/layout_${sd}_r$r.jsonl > $OUT/layout_${sd}_r$r.log 2>&1
  echo "layout $sd r$r rc=$? ${SECONDS}s" >> $S
done; done
timeout 300 bash scripts/gpu_check.sh --no-build --steps=tests,conformance $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests,conformance rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/g/tests.log | head -5 | tr '\n' ';') $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/g/conformance.log | cut -c1-100 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log g gpu_check.txt
