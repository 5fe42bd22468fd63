#!/bin/bash
# s45 device run 1: the build of this session's tree (sm_80 + sm_90a; kernels unchanged since
# session 44, host code: each layer's model softmax scale, encoder-decoder serving in `run`).
# The runtime tests (encoder-decoder and chunked local on CUDA among them), verified
# `attnkit run --device cuda` over every bundled model that runs on a GPU (session 44 had no
# full-model run after the kChunk kernels landed), the CUDA_FLASH / CUDA_MLA conformance cells,
# then every CudaFlash / CudaMla GPU test.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s45/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader >> $S
timeout 150 /tmp/z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED  \]|FAILED  \]|OnCuda \(' $W/runtime_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
save
run() {
  echo "-- $*" >> $W/run.log
  timeout 100 /tmp/z/attnkit run --device cuda --verify --quiet "$@" >> $W/run.log 2>&1
  echo "run cuda '$*' rc=$? ${SECONDS}s" >> $S
}
run --model qwen3-0.6b
run --model t5-small --dtype bfloat16 --requests 8 --prompt-len 400 --decode-steps 32
run --model t5-small --dtype float16 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 200 --decode-steps 16
run --model gemma-4-26b-a4b --requests 3 --prompt-len 600 --decode-steps 8
run --model deepseek-v3 --requests 4 --prompt-len 500 --decode-steps 8
run --model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 300 --decode-steps 4
run --model glm-4.7-flash --requests 2 --prompt-len 300 --decode-steps 4
run --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8
run --model gpt-oss-20b --requests 2 --prompt-len 200
run --model llama-4-scout-17b-16e-instruct --requests 2 --prompt-len 9000 --decode-steps 6 --max-tokens-per-step 4096
run --model llama-4-scout-17b-16e-instruct --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8
run --model gemma-3-1b-it --requests 4 --prompt-len 700 --decode-steps 8
run --model paligemma-3b-pt-224 --dtype bfloat16 --requests 2 --prompt-len 400 --decode-steps 4
run --model modernbert-base --dtype bfloat16 --requests 4 --prompt-len 300
run --model nemotron-3-nano-30b-a3b --requests 2 --prompt-len 300 --decode-steps 4
run --model mixtral-8x7b --requests 2 --prompt-len 300 --decode-steps 4
run --model phi-3.5-mini-instruct --requests 2 --prompt-len 300 --decode-steps 4
grep -E "^-- |verification|verified|steps \(" $W/run.log | cut -c1-240 >> $S; save
timeout 150 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout $((585 - SECONDS)) /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran|FAILED  \]' $W/cuda_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
