#!/bin/bash
# Session 63, device call 2: bbcb20f's build (the committed kernels) on whatever GPU comes.
# .devbin/s63/bin.txz: attnkit, tests, conformance of bbcb20f; pv/attnkit: the same attnkit with
# session 62's bench diff (V rows of 192/128 packed at 128 in run_shape and sampled_check).
# 1. A split sweep of decode 1x32k, GQA 32/4 and 32/8, bf16 and fp8 caches, pages 16/64/128 (the
# suite's grid): the plan's count (0) and forced 16..128, two rounds; 2. gpu_check's tests and
# conformance.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s63/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2; do for n in 0 16 24 32 48 64 96 128; do
  timeout 60 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 --splits $n --out $OUT/sweep_s${n}_r$r.jsonl > $OUT/sweep_s${n}_r$r.log 2>&1
  echo "sweep $n r$r rc=$? ${SECONDS}s" >> $S
done; done
timeout 300 bash scripts/gpu_check.sh --no-build --steps=tests,conformance $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests,conformance rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/g/tests.log | head -5 | tr '\n' ';') $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/g/conformance.log | cut -c1-100 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log g gpu_check.txt
