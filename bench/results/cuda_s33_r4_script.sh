#!/bin/bash
# s33 device run 4 (470affd): the large-offset tests (blocks past 4 GiB, query/output tokens
# strided past 2^31 elements) under memcheck and racecheck, every test of the backends and
# runtime binaries, the conformance suite on every backend, and verified runs on both devices.
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
timeout 330 /tmp/z/attnkit_test_backends > $W/backend_tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|^\[  SKIPPED|FAILED' $W/backend_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 120 /tmp/z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  SKIPPED|FAILED' $W/runtime_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 240 /tmp/z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -cE 'cells checked' $W/conformance.txt) backends ${SECONDS}s" >> $S
grep -E 'cells checked' $W/conformance.txt | sed -E 's/\(.*worst error/: worst/' >> $S
save
for d in cpu cuda; do
  timeout 120 /tmp/z/attnkit run --device $d --verify > $W/run_default_$d.log 2>&1
  echo "run $d rc=$? $(grep -c 'verification: OK' $W/run_default_$d.log) verified ${SECONDS}s" >> $S
done
save
cat $S
