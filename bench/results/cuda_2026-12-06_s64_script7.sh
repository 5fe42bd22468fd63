#!/bin/bash
# Session 64, device call 7 (the budget's last ~200 s, warm H100): decode over a cache larger than
# the batch (--pool): 1x32k 32/4 and 32/8 at pools 1 and 16, two rounds; 16x8k and 64x4k at
# pools 1 and 4, one round.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s64b/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name --format=csv,noheader > $S
for r in 1 2; do for p in 1 16; do
  timeout 30 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --pool $p --out $OUT/l32k_p${p}_r$r.jsonl > /dev/null 2>&1
  echo "1x32k pool $p r$r rc=$? ${SECONDS}s" >> $S
done; done
for p in 1 4; do
  timeout 40 $B/attnkit bench --device cuda --suite decode --decode-grid 16x8192,64x4096 --pool $p --out $OUT/mid_p${p}.jsonl > /dev/null 2>&1
  echo "16x8k,64x4k pool $p rc=$? ${SECONDS}s" >> $S
done
cd $OUT && tar czf all.tgz *.txt *.jsonl && rm -rf *.jsonl
