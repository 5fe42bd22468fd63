#!/bin/bash
# s30 device run 2 (bin2: concurrent parts on by default, the experiment switch removed): every
# CudaFlash and CudaMla test, the CUDA conformance cells, the runtime tests, the default run.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s30/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
timeout 400 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -8 | tr '\n' ' ') ${SECONDS}s" >> $S
save
timeout 60 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | cut -c1-200 >> $S
timeout 30 /tmp/z/attnkit_test_runtime > $W/runtime.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
save
timeout 30 /tmp/z/attnkit run --device cuda --verify --quiet > $W/run_default.log 2>&1
echo "default run rc=$? $(grep -c 'verification: OK' $W/run_default.log) verified ${SECONDS}s" >> $S
save
cat $S
