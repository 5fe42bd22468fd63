#!/bin/bash
# s25 device run 4 (run 3's binaries): split-count sweep of the 1x32k decode rows, whose layer-loop
# figures (a graph of 4-32 layers' calls, the model-step protocol) had never been swept: is there a
# count at which fp8 runs 1.6x bf16 at 32/4? Forced counts 8..128 and the plan's own, both dtypes,
# GQA 32/8 and 32/4, pages 16/64/128. One archive.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s25/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
for round in 1 2; do
  for sp in 0 8 16 24 32 48 64 96 128; do
    $B bench --device cuda --suite decode --decode-grid 1x32768 --splits $sp --out $W/sweep_s${sp}_r$round.jsonl > /dev/null 2>>$W/err.txt
    echo "round $round splits $sp rc=$? ${SECONDS}s" >> $S
  done
done
cat $S | tail -3; tar czf $OUT/r4.tgz -C $W .
