#!/bin/bash
# s46 device run 1: the fp8 decode form's shared-memory floor (two CTAs per SM) kept for heads of
# 128 and more only (tiles.hpp fp8_decode_min_smem): head 64 may run four CTAs per SM, 80 and 96
# three. A = session 45's build (bin3, kernels as HEAD), B = this tree's. Decode rows alternating
# A and B, two rounds: 20/20 head 64 over 1500 keys (Whisper), 32/8 head 64 (Llama-3.2-1B),
# 32/32 head 96 (Phi-3.5), 32/32 head 80 (Phi-2), 32/8 head 128 as a control; the peers at the
# head-64 and head-80 shapes; B's registers per kernel, its CUDA conformance cells and a verified
# Whisper-shaped run over fp8.
cd "$(dirname "$0")/../.." && rm -rf /tmp/a /tmp/b && mkdir -p /tmp/a /tmp/b
tar xJf .devbin/s45/bin3.txz -C /tmp/a && tar xJf .devbin/s46/bin1.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader >> $S
cuobjdump --dump-resource-usage /tmp/b/attnkit 2>/dev/null | grep -A1 "flash_fwd_kernelILi\(64\|80\|96\|128\)ELi" | grep -o "Function [^:]*\|REG:[0-9]*\|SHARED:[0-9]*" | paste - - - > $W/regs_B.txt
echo "regs: $(wc -l < $W/regs_B.txt) kernels listed ${SECONDS}s" >> $S
W1="--decode-heads 20/20 --decode-head 64 --decode-grid 16x1500,64x1500,256x1500"
G1="--decode-heads 32/8 --decode-head 64 --decode-grid 1x32768,16x8192,64x4096,256x2048"
P1="--decode-heads 32/32 --decode-head 96 --decode-grid 1x32768,16x8192,64x4096"
E1="--decode-heads 32/32 --decode-head 80 --decode-grid 16x8192,64x4096"
H1="--decode-heads 32/8 --decode-head 128 --decode-grid 1x32768,64x4096"
for round in 1 2; do
  for set in W1 G1 P1 E1 H1; do
    for bin in a b; do
      [ $SECONDS -gt 300 ] && break
      o=$W/attnkit_${set}_${bin}_r$round
      LD_LIBRARY_PATH=/tmp/$bin/lib timeout 90 /tmp/$bin/attnkit bench --device cuda --suite decode ${!set} --out $o.jsonl > /dev/null 2> $o.err
      echo "attnkit $set $bin round $round rc=$? rows $(wc -l < $o.jsonl) ${SECONDS}s" >> $S
    done
  done
  save
done
for set in W1 G1 E1; do
  [ $SECONDS -gt 380 ] && break
  timeout 60 python3 bench/peers_gpu.py --suite decode ${!set} --out $W/peers_$set.jsonl > /dev/null 2> $W/peers_$set.err
  echo "peers $set rc=$? rows $(wc -l < $W/peers_$set.jsonl) ${SECONDS}s" >> $S
done
save
timeout 120 /tmp/b/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
save
C=$W/cfg && mkdir -p $C
cat > $C/whisper-large-v3-shape.json <<'CFG'
{"model_type":"whisper","d_model":1280,"encoder_layers":32,"decoder_layers":32,
 "encoder_attention_heads":20,"decoder_attention_heads":20,"max_source_positions":1500,
 "max_target_positions":448,"is_encoder_decoder":true,"torch_dtype":"float16"}
CFG
for kv in fp8 auto; do
  [ $SECONDS -gt 540 ] && break
  timeout 40 /tmp/b/attnkit run --device cuda --verify --quiet --model $C/whisper-large-v3-shape.json --kv-cache-dtype $kv --requests 8 --prompt-len 1500 --decode-steps 32 --max-tokens-per-step 3000 >> $W/run.log 2>&1
  echo "run whisper $kv rc=$? ${SECONDS}s" >> $S
done
grep -E "verification|verified" $W/run.log | cut -c1-240 >> $S
save
timeout $((585 - SECONDS)) /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*Decode*:CudaFlash*Fp8*:CudaFlashHost.*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran|FAILED  \]' $W/cuda_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
