#!/bin/bash
# s33 device run 4 (HEAD's tests, no kernel change since run 1): the large-offset tests (blocks
# past 4 GiB, query/output tokens strided past 2^31 elements) plainly and under memcheck and
# racecheck, then every CudaFlash test.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s33/bin4.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r4.tgz -C $W . ; }
F='CudaFlash.BlocksPastFourGiB:CudaFlash.ZeroPagesPastFourGiBManyAtOnce'
timeout 120 /tmp/z/attnkit_test_backends --gtest_filter="$F:CpuFlash.BlocksPastFourGiB" > $W/new_tests.txt 2>&1
echo "new tests rc=$? $(grep -E '^\[       OK|^\[  FAILED|^\[  PASSED' $W/new_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
save
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool /tmp/z/attnkit_test_backends --gtest_filter="$F" > $W/${tool}_new.txt 2>&1
  echo "$tool new rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/${tool}_new.txt | tail -1) ${SECONDS}s" >> $S
  save
done
timeout 300 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/cuda_tests.txt 2>&1
echo "CudaFlash/CudaMla tests rc=$? $(grep -E '^\[  PASSED|^\[  SKIPPED|FAILED' $W/cuda_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
