#!/bin/bash
# s33 device runs 6 and 7 (cf48dae, then 327d9c1 after the review): the test binary's large-offset tests on
# the H200.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s33/bin6.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
timeout 120 /tmp/z/attnkit_test_backends --gtest_filter='*PastFourGiB*:CudaFlash.ZeroPages*' 2>&1 | tee $OUT/new_tests.txt | grep -E '^\[       OK|^\[  FAILED|^\[  PASSED|^\[  SKIPPED'
