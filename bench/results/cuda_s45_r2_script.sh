#!/bin/bash
# s45 device run 2: the build after run 1 plus --kv-cache-dtype-skip-layers, checkpoint KV schemes
# (quantization_config), Whisper's encoder/decoder lengths and Granite as a known type (host code
# only; kernel sources unchanged). The runtime tests (the mixed-precision and encoder-decoder runs
# on CUDA among them), then verified `attnkit run --device cuda` workloads over those paths.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s45/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt C=/tmp/w/cfg
rm -rf $W && mkdir -p $W $C && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
timeout 150 /tmp/z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED  \]|FAILED  \]|OnCuda \(' $W/runtime_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
save
# whisper-large-v3's attention shape (d_model 1280, 20 heads of 64, 32 + 32 layers, 1500 frames).
cat > $C/whisper-large-v3-shape.json <<'CFG'
{"model_type":"whisper","d_model":1280,"encoder_layers":32,"decoder_layers":32,
 "encoder_attention_heads":20,"decoder_attention_heads":20,"max_source_positions":1500,
 "max_target_positions":448,"is_encoder_decoder":true,"torch_dtype":"float16"}
CFG
# A llama-3.1-8b-shaped checkpoint calibrated for fp8 KV with per-head scales (llm-compressor).
cat > $C/llama-fp8-kv-per-head.json <<'CFG'
{"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,
 "num_hidden_layers":8,"max_position_embeddings":131072,"torch_dtype":"bfloat16",
 "quantization_config":{"quant_method":"compressed-tensors","kv_cache_scheme":{"dynamic":false,
 "num_bits":8,"strategy":"attn_head","symmetric":true,"type":"float"}}}
CFG
# Granite 4 hybrid shape: attention_multiplier as the softmax scale, mamba layers (zeroing on).
cat > $C/granite4-hybrid-shape.json <<'CFG'
{"model_type":"granitemoehybrid","hidden_size":1536,"num_attention_heads":12,
 "num_key_value_heads":4,"num_hidden_layers":8,"layer_types":["mamba","mamba","mamba",
 "attention","mamba","mamba","mamba","attention"],"attention_multiplier":0.0078125,
 "mamba_n_heads":48,"mamba_d_head":64,"mamba_n_groups":1,"mamba_d_state":128,"mamba_d_conv":4,
 "max_position_embeddings":131072,"torch_dtype":"bfloat16"}
CFG
run() {
  echo "-- $*" >> $W/run.log
  timeout 120 /tmp/z/attnkit run --device cuda --verify --quiet "$@" >> $W/run.log 2>&1
  echo "run cuda '$*' rc=$? ${SECONDS}s" >> $S
}
run --model gemma-2-9b --kv-cache-dtype fp8 --kv-cache-dtype-skip-layers sliding_window --requests 4 --prompt-len 600 --decode-steps 16
run --model gemma-3-1b-it --kv-cache-dtype fp8 --kv-cache-dtype-skip-layers sliding_window --requests 4 --prompt-len 700 --decode-steps 8
run --model $C/llama-fp8-kv-per-head.json --requests 8 --prompt-len 1000 --decode-steps 16
run --model $C/llama-fp8-kv-per-head.json --kv-cache-dtype fp8_e5m2 --requests 4 --prompt-len 500 --decode-steps 8
run --model $C/whisper-large-v3-shape.json --requests 16 --prompt-len 1500 --decode-steps 64 --max-tokens-per-step 3000
run --model $C/whisper-large-v3-shape.json --kv-cache-dtype fp8 --requests 8 --prompt-len 1500 --decode-steps 32 --max-tokens-per-step 3000
run --model $C/granite4-hybrid-shape.json --requests 4 --prompt-len 700 --decode-steps 16
grep -E "^-- |verification|verified|steps \(|tokens/s|KV cache:|^- " $W/run.log | cut -c1-240 >> $S; save
cat $S
