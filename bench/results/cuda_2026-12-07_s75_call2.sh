#!/bin/bash
# Session 75, device call 2: the GPU tests of change (c) (session 74's diff, which call 1 measured
# against HEAD), built here for sm_90a only (.devbin/s75c/bin.txz, not in git: c/ with the two
# test binaries, lib/). Call 1 ran (d)'s tests, not (c)'s; (c) differs from (d) only in the
# prologue. 1. the tests of the prefill forms (packed and ring copies, every head pair, swizzled
# rows, PrefixLM, graph capture); 2. the copy tests under memcheck and racecheck; 3. the
# conformance suite's CUDA_FLASH_v2 cells and its randomized layers; 4. every other GPU test while
# the call's time lasts.
cd "$(dirname "$0")/../.." && rm -rf /tmp/ac && mkdir -p /tmp/ac && tar xJf .devbin/s75c/bin.txz -C /tmp/ac
export ATTNKIT_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=/tmp/ac/lib
S=$OUT/summary.txt SECONDS=0 CAP=${CAP:-300} T=/tmp/ac/c/attnkit_test_backends
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
res() { echo "$1 rc=$2 $(grep -hE 'SUMMARY|^\[  PASSED|^\[  FAILED|^\[ +SKIPPED \] [0-9]' $3 | tr '\n' ';') ${SECONDS}s" >> $S; }
P=PagesHoldingWholeTiles:TwoMTilePrefillAndRegisterFp8Decode:PrefillFp16Head64PageOne:EveryManifestHeadPair
P=$P:SharedRowsSwizzledEveryForm:PrefillOutputRowsOfAnyAlignment:GrowingLogitsRescaleAcrossTiles
P=$P:PrefixLmRangesWidenRows:GraphCapturePrefixLmReplanReplay:WindowSoftcapAlibiSinks:NonCausalMqaHead256
P=$P:NonCausalTwoSidedWindow:DecodeGqaBf16Head128:GraphCaptureReplanReplay:Heads160And224
F1=CudaFlash.${P//:/:CudaFlash.}
timeout 120 $T --gtest_filter="$F1" > $OUT/tests_prefill.log 2>&1; res "tests prefill" $? $OUT/tests_prefill.log
F2='CudaFlash.PagesHoldingWholeTiles:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode'
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $T --gtest_filter="$F2" > $OUT/san_$tool.log 2>&1
  res "sanitizer $tool" $? $OUT/san_$tool.log
done
timeout 120 /tmp/ac/c/attnkit_test_conformance --gtest_filter='*/CUDA_FLASH_v2' > $OUT/conformance_v2.log 2>&1
res "conformance CUDA_FLASH_v2" $? $OUT/conformance_v2.log
grep -hE '^(conformance|fuzz): CUDA' $OUT/conformance_v2.log >> $S
timeout $((CAP - SECONDS)) $T --gtest_filter="CudaFlash*:CudaMla*:-$F1" > $OUT/tests_rest.log 2>&1
echo "tests rest rc=$? $(grep -chE '^\[ +OK' $OUT/tests_rest.log) ok; $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/tests_rest.log | cut -c1-90 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.log && rm -f *.log
cat $S
