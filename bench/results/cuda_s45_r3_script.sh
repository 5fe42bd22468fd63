#!/bin/bash
# s45 device run 3: MHA decode, never benchmarked on the GPU before (every decode row was 32/8 or
# 32/4): attnkit's decode rows at 32/32 (Llama-2-7B-like, head 128, beside 32/8 in the same
# invocation), 20/20 head 64 over 1500 keys (Whisper's cross-attention decode) and 32/32 head 96
# (Phi-3.5-mini), bf16 and fp8, pages 16/64/128, two rounds each; the peers (cuDNN and
# FlashAttention-2 through SDPA, contiguous K/V) at the same shapes in the same call.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s45/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; cp $W/*.jsonl $OUT/ 2>/dev/null; }
A="--decode-heads 32/32,32/8 --decode-head 128 --decode-grid 1x32768,16x8192,64x4096,256x2048"
B="--decode-heads 20/20 --decode-head 64 --decode-grid 16x1500,64x1500,256x1500"
C="--decode-heads 32/32 --decode-head 96 --decode-grid 1x32768,16x8192,64x4096"
for round in 1 2; do
  for set in A B C; do
    [ $SECONDS -gt 420 ] && break
    timeout 120 /tmp/z/attnkit bench --device cuda --suite decode ${!set} --out $W/attnkit_${set}_r$round.jsonl > /dev/null 2> $W/attnkit_${set}_r$round.err
    echo "attnkit $set round $round rc=$? rows $(wc -l < $W/attnkit_${set}_r$round.jsonl) ${SECONDS}s" >> $S; save
  done
  for set in A B C; do
    [ $SECONDS -gt 480 ] && break
    timeout 100 python3 bench/peers_gpu.py --suite decode ${!set} --out $W/peers_${set}_r$round.jsonl > /dev/null 2> $W/peers_${set}_r$round.err
    echo "peers $set round $round rc=$? rows $(wc -l < $W/peers_${set}_r$round.jsonl) ${SECONDS}s" >> $S; save
  done
done
cat $S
