#!/bin/bash
# s33 device run 1 (caf9148): the new large-offset tests (blocks past 4 GiB for every CUDA form,
# write_kv, more than 65535 pages zeroed in one call), under compute-sanitizer memcheck too; then
# every test of the backends and runtime binaries, the conformance suite and verified runs.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s33/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $W/gpu.txt 2>&1
F='CudaFlash.BlocksPastFourGiB:CudaFlash.ZeroPagesPastFourGiBManyAtOnce:CpuFlash.BlocksPastFourGiB'
timeout 120 /tmp/z/attnkit_test_backends --gtest_filter=$F > $W/new_tests.txt 2>&1
echo "new tests rc=$? $(grep -E '^\[       OK|^\[  FAILED|^\[  PASSED' $W/new_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 240 compute-sanitizer --tool memcheck /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash.BlocksPastFourGiB:CudaFlash.ZeroPagesPastFourGiBManyAtOnce' > $W/memcheck_new.txt 2>&1
echo "memcheck new rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck_new.txt | tail -1) ${SECONDS}s" >> $S
save
timeout 330 /tmp/z/attnkit_test_backends > $W/backend_tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|^\[  SKIPPED|FAILED' $W/backend_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 120 /tmp/z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  SKIPPED|FAILED' $W/runtime_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 120 /tmp/z/attnkit run --device cuda --verify > $W/run_default_cuda.log 2>&1
echo "run cuda rc=$? $(grep -c 'verification: OK' $W/run_default_cuda.log) verified ${SECONDS}s" >> $S
save
cat $S
