#!/bin/bash
# s47 device run 2: the final build. Verified `attnkit run --device cuda` of the four hybrid
# families the reader now places (configs written inline, shaped as each family's published
# fields): Jamba (Mamba-1), Bamba (Mamba2 at attn_layer_indices), Falcon-H1 (attention and Mamba2
# in every layer), LFM2 (short convolutions), over the model dtype's cache and fp8; the float32
# checkpoints again; the runtime GPU tests; the CudaFlash / CudaMla GPU tests (kernels rebuilt,
# unchanged).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b /tmp/c
tar xJf .devbin/s47/bin2.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
cat > /tmp/c/jamba.json <<'J'
{"architectures":["JambaForCausalLM"],"model_type":"jamba","hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32,"attn_layer_period":8,"attn_layer_offset":4,"mamba_d_conv":4,"mamba_d_state":16,"mamba_expand":2,"max_position_embeddings":262144,"sliding_window":null,"torch_dtype":"bfloat16"}
J
cat > /tmp/c/bamba.json <<'J'
{"architectures":["BambaForCausalLM"],"model_type":"bamba","hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32,"attn_layer_indices":[9,18,27],"mamba_n_heads":128,"mamba_d_head":"auto","mamba_n_groups":1,"mamba_d_state":128,"mamba_d_conv":4,"mamba_expand":2,"max_position_embeddings":262144,"torch_dtype":"bfloat16"}
J
cat > /tmp/c/falcon_h1.json <<'J'
{"architectures":["FalconH1ForCausalLM"],"model_type":"falcon_h1","hidden_size":1024,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":64,"num_hidden_layers":36,"mamba_d_ssm":1536,"mamba_n_heads":24,"mamba_d_head":64,"mamba_n_groups":1,"mamba_d_state":128,"mamba_d_conv":4,"mamba_expand":2,"max_position_embeddings":16384,"torch_dtype":"bfloat16"}
J
cat > /tmp/c/lfm2.json <<'J'
{"architectures":["Lfm2ForCausalLM"],"model_type":"lfm2","hidden_size":2048,"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":16,"conv_L_cache":3,"full_attn_idxs":[2,5,8,10,12,14],"max_position_embeddings":128000,"torch_dtype":"bfloat16"}
J
for m in /tmp/c/jamba.json /tmp/c/bamba.json /tmp/c/falcon_h1.json /tmp/c/lfm2.json t5-small modernbert-base; do
  for kv in auto fp8; do
    n=$(basename $m .json)_$kv
    timeout 120 /tmp/b/attnkit run --model $m --device cuda --requests 8 --prompt-len 300 --decode-steps 8 --kv-cache-dtype $kv --verify > $OUT/run_$n.txt 2>&1
    echo "run $n rc=$? $(grep -E '^model |block size|^verification' $OUT/run_$n.txt | head -3 | tr '\n' ' ') ${SECONDS}s" >> $S
  done
done
timeout 150 /tmp/b/attnkit_test_runtime > $OUT/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/runtime_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
timeout $((560 - SECONDS)) /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/cuda_tests.txt | head -8 | tr '\n' ';') $(grep -c '^\[       OK' $OUT/cuda_tests.txt) ok ${SECONDS}s" >> $S
cat $S
