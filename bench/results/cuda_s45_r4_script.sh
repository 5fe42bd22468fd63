#!/bin/bash
# s45 device run 4: split-count sweep of run 3's weakest MHA rows (Whisper's cross-attention
# decode shape: 20/20 heads of 64 over 1500 keys, batches 16 and 64; the plan takes 3 and 1
# splits), forced counts 1..12 against the plan's own (0), bf16 and fp8, pages 16/64/128.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s45/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w4 S=/tmp/w4/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
for s in 0 1 2 3 4 6 8 12; do
  timeout 60 /tmp/z/attnkit bench --device cuda --suite decode --decode-heads 20/20 --decode-head 64 --decode-grid 16x1500,64x1500 --splits $s --out $W/sweep_s$s.jsonl > /dev/null 2> $W/sweep_s$s.err
  echo "splits $s rc=$? rows $(wc -l < $W/sweep_s$s.jsonl) ${SECONDS}s" >> $S
done
cat $W/sweep_s*.jsonl > $OUT/sweep.jsonl; cp $S $OUT/summary.txt
cat $S
