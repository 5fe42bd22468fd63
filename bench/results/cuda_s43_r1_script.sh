#!/bin/bash
# s43 device run 1: chunked local attention (Llama 4) in CUDA_FLASH's masks. B = this tree's
# build (sm_80 + sm_90a), A = the build of 77c1fbb (kernels unchanged since Dec 2). Resource
# usage of both binaries' kernels (registers, stack, local memory: spills), verified CUDA runs of
# a Llama-4-shaped model with 256-token chunks (chunked prefill and decode across chunk
# boundaries) and of the bundled models, and the conformance suite on the GPU.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s43/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $W/nvidia-smi.txt 2>&1
for v in A B; do cuobjdump -res-usage /tmp/z/attnkit_$v > $W/res_usage_$v.txt 2>&1; done
echo "res-usage A: $(grep -c 'REG:' $W/res_usage_A.txt) functions, B: $(grep -c 'REG:' $W/res_usage_B.txt); with LOCAL>0: A $(grep -c 'LOCAL:[1-9]' $W/res_usage_A.txt), B $(grep -c 'LOCAL:[1-9]' $W/res_usage_B.txt)" >> $S
cat > /tmp/llama4_small.json <<'CFG'
{"model_type":"llama4","text_config":{"model_type":"llama4_text","hidden_size":5120,
 "num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"num_hidden_layers":4,
 "attention_chunk_size":256,"max_position_embeddings":8192,"torch_dtype":"bfloat16"}}
CFG
for args in "--model /tmp/llama4_small.json --requests 3 --prompt-len 700 --decode-steps 80 --max-tokens-per-step 256" \
  "--model /tmp/llama4_small.json --kv-cache-dtype fp8_e4m3 --requests 5 --prompt-len 300 --decode-steps 230" \
  "--model /tmp/llama4_small.json --dtype float16 --requests 2 --prompt-len 1500 --decode-steps 20 --max-tokens-per-step 1024" \
  "--model llama-4-scout-17b-16e-instruct --requests 2 --prompt-len 300 --decode-steps 8" \
  "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  echo "-- $args" >> $W/run.log
  timeout 100 /tmp/z/attnkit_B run --device cuda --verify --quiet $args >> $W/run.log 2>&1
  echo "run B cuda '$args' rc=$? ${SECONDS}s" >> $S
done
grep -E "^-- |verification|chunked" $W/run.log >> $S; save
timeout 240 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA_FLASH*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
