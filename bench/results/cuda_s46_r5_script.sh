#!/bin/bash
# s46 device run 5: the final build's occupancy test (now also refusing an unknown
# CudaFlashOptions::decode_occupancy) and the CudaFlash decode and host tests.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b
tar xJf .devbin/s46/bin5.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 240 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.DecodeFormOccupancyByGrid:CudaFlash*Decode*:CudaFlashHost.*' > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|OccupancyByGrid \(' $OUT/cuda_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" | tee $OUT/summary.txt
