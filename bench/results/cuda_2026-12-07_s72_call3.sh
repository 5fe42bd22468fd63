#!/bin/bash
# Session 72, device call 3 (the budget left, 275 s, holds one short call): the final tree's build
# (d: 192-byte rows swizzled, calls 0-1's kernels; the dequantization change (c) reverted unrun;
# .devbin/s72d/bin.txz, not in git). 1. the four sanitizers over SharedRows192EveryForm (its first
# GPU run) and the two-m-tile prefill test; 2. those tests and PagesHoldingWholeTiles bare; 3. the
# conformance suite while the call's time lasts.
cd "$(dirname "$0")/../.." && rm -rf /tmp/d && mkdir -p /tmp/d && tar xJf .devbin/s72d/bin.txz -C /tmp/d
export LD_LIBRARY_PATH=/tmp/d/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 D=/tmp/d CAP=${CAP:-170}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
F='CudaFlash.SharedRows192EveryForm:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode'
for tool in memcheck racecheck synccheck initcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $D/attnkit_test_backends --gtest_filter="$F" > $OUT/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -hE 'SUMMARY|^\[  PASSED|^\[  FAILED' $OUT/san_$tool.log | tr '\n' ';') ${SECONDS}s" >> $S
done
timeout 60 $D/attnkit_test_backends --gtest_filter="$F:CudaFlash.PagesHoldingWholeTiles" > $OUT/tests.log 2>&1
echo "tests rc=$? $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/tests.log | cut -c1-80 | tr '\n' ';') ${SECONDS}s" >> $S
timeout $((CAP - SECONDS)) $D/attnkit_test_conformance > $OUT/conformance.log 2>&1
echo "conformance rc=$? $(grep -hE '^conformance: CUDA.*cells checked|^\[  PASSED|FAILED  \]' $OUT/conformance.log | cut -c1-90 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.log 2>/dev/null; rm -rf *.log
cat $S
