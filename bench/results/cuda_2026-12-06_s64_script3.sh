#!/bin/bash
# Session 64, device call 3: the bench's --pool (a cache of pool x the blocks a batch reads, K, V
# and the layer loop's layers a pool apart). Decode 1x32k GQA 32/4, bf16 and fp8, pages
# 16/64/128, at pools 1 (the bench until now: K and V exactly 2^24 / 2^25 bytes apart), 1.37,
# 2 (power-of-two offsets again) and 3, shuffled, and 1 / 1.37 sequential; two rounds. Does
# fp8's page-64 shortfall in the layer loop follow the power-of-two offsets?
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s64b/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2; do for c in p1 p1.37 p2 p3 s1 s1.37; do
  a="--pool ${c#?}"; [ ${c:0:1} = s ] && a="$a --sequential-blocks"
  timeout 60 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4 $a --out $OUT/pool_${c}_r$r.jsonl > $OUT/pool_${c}_r$r.log 2>&1
  echo "pool $c r$r rc=$? ${SECONDS}s" >> $S
done; done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -rf *.jsonl *.log
