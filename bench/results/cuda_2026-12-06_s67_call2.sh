#!/bin/bash
# Session 67, device call 2, on call 1's build (b): every GPU test, the conformance suite and the
# seven verified serving runs (scripts/gpu_check.sh --steps=tests,conformance,runs); then
# PagesHoldingWholeTiles (heads 80 and 96's one-run copies among its cases) under memcheck and
# racecheck.
# .devbin/s67c/bin.txz (not in git): attnkit and both test binaries of (b), sm_90a.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s67c/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
TEST_BIN=$B/attnkit_test_backends CONF_BIN=$B/attnkit_test_conformance ATTNKIT=$B/attnkit timeout 450 scripts/gpu_check.sh --no-build --steps=tests,conformance,runs $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests,conformance,runs rc=$? $(grep -hE '^\[  PASSED|FAILED  \]|cells checked' $OUT/g/tests.log $OUT/g/conformance.log | cut -c1-80 | tr '\n' ';') ${SECONDS}s" >> $S
grep -E '^-- |verified|^verification' $OUT/g/run.log >> $S
for tool in memcheck racecheck; do
  timeout $((585 - SECONDS)) compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $B/attnkit_test_backends --gtest_filter=CudaFlash.PagesHoldingWholeTiles > $OUT/san_$tool.log 2>&1
  echo "$tool rc=$? $(tail -n 2 $OUT/san_$tool.log | tr '\n' ';') ${SECONDS}s" >> $S
done
cd $OUT && tar czf all.tgz *.txt *.log g && rm -rf *.log g gpu_check.txt
