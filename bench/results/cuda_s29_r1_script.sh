#!/bin/bash
# s29 device run 1 (bin1 = HEAD 30b45b6, session 28's final build): what session 28 changed after
# its last device run (spec test fix, batch_parts' zero-row placement, no combine for a part
# without rows, uniform splits on the speculative path, run() through sub_batch). The three new
# tests and memcheck on them first, then CudaFlash and CudaMla suites, conformance, runtime tests,
# verified runs; a deepseek-v3 chunked-prefill run as CUDA_MLA's one-launch baseline.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s29/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
NEW='CudaFlash.Fp8Speculative*:CudaFlash.MixedBatches*:CudaFlash.GraphCaptureTwoParts*'
/tmp/z/attnkit_test_backends --gtest_filter="$NEW" > $W/new_tests.txt 2>&1
echo "new tests rc=$? $(grep -E '^\[  PASSED|FAILED|OK \]' $W/new_tests.txt | tr '\n' ' ') ${SECONDS}s" >> $S
save
timeout 150 compute-sanitizer --tool memcheck /tmp/z/attnkit_test_backends --gtest_filter="$NEW" > $W/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $W/memcheck.txt | tail -1) ${SECONDS}s" >> $S
save
/tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -8 | tr '\n' ' ') ${SECONDS}s" >> $S
save
/tmp/z/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | cut -c1-200 >> $S
/tmp/z/attnkit_test_runtime > $W/runtime.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
save
{ /tmp/z/attnkit run --device cuda --verify --quiet
  /tmp/z/attnkit run --device cuda --verify --quiet --model qwen3-8b --requests 64 --prompt-len 2000 --decode-steps 4 --max-tokens-per-step 2048
  /tmp/z/attnkit run --device cuda --verify --quiet --model deepseek-v3 --requests 32 --prompt-len 1000 --decode-steps 4 --max-tokens-per-step 512; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
save
cat $S
