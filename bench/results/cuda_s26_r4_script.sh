#!/bin/bash
# s26 device run 4: the encoder rows with ModernBERT's local window (keys within 64 either side)
# beside the dense ones, as planned (v3: the Hopper form from 1k keys) and on v2, two alternating
# rounds. Outputs in one archive.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s26/bin4.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0 && : > $S
for r in 1 2; do
  for v in auto v2; do
    $B bench --device cuda --suite encoder --variant $v --out $W/enc_${v}_$r.jsonl > /dev/null 2>>$W/err.txt
    echo "bench encoder $v round $r rc=$? ${SECONDS}s" >> $S
  done
done
cat $S; tar czf $OUT/r4.tgz -C $W .
