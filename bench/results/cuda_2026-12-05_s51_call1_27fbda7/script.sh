#!/bin/bash
# Session 51, call 1: HEAD (27fbda7) binaries. GPU tests, the whole conformance binary on CUDA
# (cells + 120 fuzz layers per backend), then fuzz campaigns per CUDA backend, verified runs.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b
tar xJf .devbin/s51/binA.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $OUT/cuda_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 200 /tmp/b/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E '^(conformance|fuzz):|^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-220 | tr '\n' ';') ${SECONDS}s" >> $S
for seed in 51001 51002; do
  for be in CUDA_FLASH CUDA_FLASH_v2 CUDA_MLA; do
    n=1500; [ $be = CUDA_MLA ] && n=400
    ATTNKIT_FUZZ_VERBOSE=1 ATTNKIT_FUZZ_SEED=$seed ATTNKIT_FUZZ_CASES=$n timeout 100 /tmp/b/attnkit_test_conformance \
      --gtest_filter="*Fuzz.RandomLayers*/$be" >> $OUT/fuzz.txt 2>&1
    echo "fuzz $be seed=$seed n=$n rc=$? $(grep -E '^fuzz:' $OUT/fuzz.txt | tail -1 | cut -c1-200) ${SECONDS}s" >> $S
  done
done
R=$OUT/runs.txt
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gpt-oss-20b --requests 2 --prompt-len 200" \
  "--model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8"; do
  echo "-- run --device cuda --verify $args" >> $R
  timeout 60 /tmp/b/attnkit run --device cuda --verify --quiet $args >> $R 2>&1
  echo "run [$args] rc=$? ${SECONDS}s" >> $S
done
grep -E '^-- |verif' $R >> $S
gzip -k $OUT/fuzz.txt 2>/dev/null; [ $(stat -c%s $OUT/fuzz.txt) -gt 15000000 ] && rm $OUT/fuzz.txt
cat $S
