#!/bin/bash
# Session 66, device call 2: the early-copy test with its cases fixed (call 1: the window and
# head-64 cases ran the prefill form, 3 query rows times a group of 16 or 8 past the decode
# form's 16 rows); 1x32k 32/4 and 32/8 at 64 splits against the plan's count (fp8 page 128 and
# bf16 pages 64 / 128 plan 32 splits at 32/4, 128 CTAs, where early copies are off), three rounds;
# then the GPU tests, the conformance suite and the verified serving runs (scripts/gpu_check.sh).
# .devbin/s66b/bin.txz (not in git): attnkit and both test binaries, sm_90a, built from the tree
# this script was committed with.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s66b/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 60 $B/attnkit_test_backends --gtest_filter='CudaFlash.EarlyCopies*' > $OUT/tests_early.txt 2>&1
echo "early tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests_early.txt | tr '\n' ';') ${SECONDS}s" >> $S
for r in 1 2 3; do for e in p s64; do
  a=; [ $e = s64 ] && a="--splits 64"
  timeout 40 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 $a --out $OUT/d32k_${e}_r$r.jsonl > $OUT/d32k_${e}_r$r.log 2>&1
  echo "1x32k $e r$r rc=$? ${SECONDS}s" >> $S
done; done
TEST_BIN=$B/attnkit_test_backends CONF_BIN=$B/attnkit_test_conformance ATTNKIT=$B/attnkit timeout $((570 - SECONDS)) scripts/gpu_check.sh --no-build --steps=tests,conformance,runs $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests,conformance,runs rc=$? $(grep -hE '^\[  PASSED|FAILED  \]|cells checked' $OUT/g/tests.log $OUT/g/conformance.log | cut -c1-80 | tr '\n' ';') ${SECONDS}s" >> $S
grep -E '^-- |verified|^verification' $OUT/g/run.log >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log tests_early.txt gpu_check.txt g
