#!/bin/bash
# s26 device run 2: is v3's head-64 length threshold (kHopperHead64MinKeys = 4096, set on 16k-token
# batches where causal 1k rows lost) right for encoder batches? The encoder grid and the prefill
# grid, each as planned and with --hopper-any-length (the Hopper form at every length), alternating,
# two rounds. Outputs in one archive.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s26/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0 && : > $S
for r in 1 2; do
  for suite in encoder prefill; do
    $B bench --device cuda --suite $suite --out $W/${suite}_planned_$r.jsonl > /dev/null 2>>$W/err.txt
    echo "$suite planned round $r rc=$? ${SECONDS}s" >> $S
    $B bench --device cuda --suite $suite --hopper-any-length --out $W/${suite}_any_$r.jsonl > /dev/null 2>>$W/err.txt
    echo "$suite any-length round $r rc=$? ${SECONDS}s" >> $S
  done
done
cat $S; tar czf $OUT/r2.tgz -C $W .
