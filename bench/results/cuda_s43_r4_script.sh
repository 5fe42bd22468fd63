#!/bin/bash
# s43 device run 4: every CudaFlash / CudaMla GPU test on run 3's B2 build (chunked local
# attention in CUDA_FLASH's masks, CudaFlash.ChunkedLocalAttention among them).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s43/bin4.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r4.tgz -C $W . ; }
timeout 500 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $W/cuda_tests.txt | head -3 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
