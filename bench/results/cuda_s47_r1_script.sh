#!/bin/bash
# s47 device run 1: dtype auto on the GPU. The runtime GPU tests (the new
# Float32PoolingModelRunsInFloat16OnCuda, T5's encoder-decoder run in bfloat16 by dtype auto, the
# explicit-float32 refusal), and verified `attnkit run --device cuda` of the float32 checkpoints
# (ModernBERT, arctic-embed, T5, PaliGemma) under dtype auto, plus a Jamba-v0.1-shaped hybrid
# (4 attention layers, 28 Mamba-1 state layers) written inline.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b
tar xJf .devbin/s47/bin1.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
cat > /tmp/jamba.json <<'J'
{"architectures":["JambaForCausalLM"],"model_type":"jamba","hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32,"attn_layer_period":8,"attn_layer_offset":4,"expert_layer_period":2,"expert_layer_offset":1,"mamba_d_conv":4,"mamba_d_state":16,"mamba_expand":2,"mamba_dt_rank":256,"max_position_embeddings":262144,"sliding_window":null,"torch_dtype":"bfloat16"}
J
for m in modernbert-base snowflake-arctic-embed-m t5-small paligemma-3b-pt-224 /tmp/jamba.json; do
  n=$(basename $m .json)
  timeout 120 /tmp/b/attnkit run --model $m --device cuda --requests 8 --prompt-len 300 --decode-steps 8 --verify > $OUT/run_$n.txt 2>&1
  echo "run $n rc=$? $(grep -E '^model |^verification' $OUT/run_$n.txt | tr '\n' ' ') ${SECONDS}s" >> $S
done
timeout 120 /tmp/b/attnkit run --model snowflake-arctic-embed-m --device cuda --dtype float32 > $OUT/run_explicit_fp32.txt 2>&1
echo "explicit float32 rc=$? (3 expected) $(grep -o 'No backend of the cuda priority list runs float32[^.]*' $OUT/run_explicit_fp32.txt) ${SECONDS}s" >> $S
timeout $((560 - SECONDS)) /tmp/b/attnkit_test_runtime > $OUT/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]|SKIPPED  \]' $OUT/runtime_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
cat $S
