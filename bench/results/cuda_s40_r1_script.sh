#!/bin/bash
# s40 device run 1: the serving loop's chunk-by-chunk KV allocation and the KV-fits check on the
# GPU (commit b87f9ea's CUDA build): the runtime tests (their GPU cases run here), the CUDA_FLASH /
# CUDA_MLA GPU tests, the CUDA conformance cells, gpu_check.sh's verified `attnkit run --device
# cuda` workloads, a sliding-window model in small chunks under a tight budget, and budgets past
# the device's free memory (refused with exit 3 before allocating).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s40/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv > $W/nvidia-smi.txt 2>&1
timeout 200 /tmp/z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' $W/runtime_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S; save
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gpt-oss-20b --requests 2 --prompt-len 200" \
  "--model qwen3-8b --requests 8 --prompt-len 1000 --decode-steps 8 --max-tokens-per-step 512" \
  "--model gemma-4-26b-a4b --requests 2 --prompt-len 300 --decode-steps 8" \
  "--model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model modernbert-base --dtype bfloat16 --requests 8 --prompt-len 1024 --max-tokens-per-step 4096" \
  "--model gemma-3-1b-it --requests 4 --prompt-len 3000 --decode-steps 8 --max-tokens-per-step 256 --memory 100MiB"; do
  echo "-- $args" >> $W/run.log
  timeout 120 /tmp/z/attnkit run --device cuda --verify --quiet $args >> $W/run.log 2>&1
  echo "run cuda '$args' rc=$? ${SECONDS}s" >> $S
done
grep -E "^-- |KV cache|verification" $W/run.log >> $S; save
for mem in 1TiB 200GiB; do
  timeout 60 /tmp/z/attnkit run --device cuda --quiet --memory $mem > $W/run_mem_$mem.log 2>&1
  echo "run cuda --memory $mem rc=$? $(grep -o 'error.*' $W/run_mem_$mem.log | cut -c1-240)" >> $S
done
save
timeout 180 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $W/cuda_tests.txt | head -3 | tr '\n' ';') ${SECONDS}s" >> $S; save
timeout 150 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'cells checked|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-160 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
