#!/bin/bash
# s43 device run 8: run 7's control (B0, this tree without the chunk in the kernels, level with
# A) put run 5's 2-3% at the fp8 1x32k rows on B3's kernel code: its fp8 decode kernel has 40 more
# SASS instructions and a different schedule. B4 keeps every non-chunked path as A had it (the
# masked tiles branch on the chunk to a second loop; the chunk's first key is a noinline call, as
# mm_row_band). A against B4: resource usage, the decode grid and the prefill suite alternating
# A B B A, the fp8 decode kernel's SASS, then B4's chunked runs and the conformance suite.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s43/bin8.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r8.tgz -C $W . ; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $W/nvidia-smi.txt 2>&1
for v in A B; do cuobjdump -res-usage /tmp/z/attnkit_$v > $W/res_usage_$v.txt 2>&1; done
echo "res-usage A: $(grep -c 'REG:' $W/res_usage_A.txt) functions, B4: $(grep -c 'REG:' $W/res_usage_B.txt); with LOCAL>0: A $(grep -c 'LOCAL:[1-9]' $W/res_usage_A.txt), B4 $(grep -c 'LOCAL:[1-9]' $W/res_usage_B.txt)" >> $S
for r in 1 2; do
  for v in $([ $r = 1 ] && echo A B || echo B A); do
    timeout 90 /tmp/z/attnkit_$v bench --device cuda --suite decode --out $W/decode_${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "decode $v r$r rc=$? ${SECONDS}s" >> $S
    timeout 90 /tmp/z/attnkit_$v bench --device cuda --suite prefill --out $W/prefill_${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "prefill $v r$r rc=$? ${SECONDS}s" >> $S
    save
  done
done
K=_ZN7attnkit10cuda_flash16flash_fwd_kernelILi128ELi128E13__nv_bfloat16Lb1ELb1ELi1ELb0ELb0EEEvNS0_11FlashParamsE
for v in A B; do
  cuobjdump -sass -arch sm_90a -fun $K /tmp/z/attnkit_$v > $W/sass_fp8_decode_$v.txt 2>&1
  echo "sass $v: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' $W/sass_fp8_decode_$v.txt) instructions" >> $S
done
cat > /tmp/llama4_small.json <<'CFG'
{"model_type":"llama4","text_config":{"model_type":"llama4_text","hidden_size":5120,
 "num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"num_hidden_layers":4,
 "attention_chunk_size":256,"max_position_embeddings":8192,"torch_dtype":"bfloat16"}}
CFG
for args in "--model /tmp/llama4_small.json --requests 3 --prompt-len 700 --decode-steps 80 --max-tokens-per-step 256" \
  "--model /tmp/llama4_small.json --kv-cache-dtype fp8_e4m3 --requests 5 --prompt-len 300 --decode-steps 230" \
  "--model /tmp/llama4_small.json --dtype float16 --requests 2 --prompt-len 1500 --decode-steps 20 --max-tokens-per-step 1024"; do
  echo "-- $args" >> $W/run.log
  timeout 60 /tmp/z/attnkit_B run --device cuda --verify --quiet $args >> $W/run.log 2>&1
  echo "run B4 cuda '$args' rc=$? $(grep -c 'verification: OK' $W/run.log) verified so far ${SECONDS}s" >> $S
done
save
timeout 120 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA_FLASH*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'cells checked|features change|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-120 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
