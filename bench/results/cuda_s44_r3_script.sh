#!/bin/bash
# s44 device run 3: the final tree's build (sm_80 + sm_90a). The chunked GPU tests plain and under
# compute-sanitizer (memcheck, racecheck, initcheck; run 1's binary had a mid-edit version of the
# graph test), the Llama 4 run-workload test on CUDA, the CUDA_FLASH conformance cells, verified
# Llama-4-shaped CUDA runs, then every CudaFlash / CudaMla GPU test.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s44/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r3.tgz -C $W . ; }
T=/tmp/z/attnkit_test_backends
timeout 120 $T --gtest_filter='CudaFlash.Chunked*:CudaFlashHost.Chunk*:CudaFlashDeclaration.Chunk*' > $W/chunk_tests.txt 2>&1
echo "chunk tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|^\[       OK|FAILED  \]' $W/chunk_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='CudaFlash.ChunkedLocalRun*' > $W/sanitizer_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  PASSED|^\[  FAILED' $W/sanitizer_$tool.txt | tr '\n' ';') ${SECONDS}s" >> $S
done
save
timeout 150 /tmp/z/attnkit_test_runtime --gtest_filter='RunWorkload.*Llama4*:RunWorkload.*Cuda*' > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|^\[       OK|SKIPPED  \]|FAILED  \]' $W/runtime_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 120 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA_FLASH*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat > /tmp/llama4_small.json <<'CFG'
{"model_type":"llama4","text_config":{"model_type":"llama4_text","hidden_size":5120,
 "num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"num_hidden_layers":4,
 "attention_chunk_size":256,"max_position_embeddings":8192,"torch_dtype":"bfloat16"}}
CFG
for args in "--model /tmp/llama4_small.json --kv-cache-dtype fp8_e4m3 --requests 5 --prompt-len 300 --decode-steps 230" \
  "--model /tmp/llama4_small.json --block-size 48 --requests 4 --prompt-len 600 --decode-steps 40" \
  "--model llama-4-scout-17b-16e-instruct --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 300 --decode-steps 8"; do
  echo "-- $args" >> $W/run.log
  timeout 120 /tmp/z/attnkit run --device cuda --verify --quiet $args >> $W/run.log 2>&1
  echo "run cuda '$args' rc=$? ${SECONDS}s" >> $S
done
grep -E "^-- |verification|chunk|block" $W/run.log | cut -c1-220 >> $S; save
timeout $((560 - SECONDS)) $T --gtest_filter='CudaFlash*:CudaMla*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran|FAILED  \]' $W/cuda_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
