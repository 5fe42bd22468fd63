#!/bin/bash
# s34 device run 2: the fp8 decode form at three CTAs per SM (B: kFp8DecodeMinSmem 0, so its 68 KB
# and 167 registers fit three; the split heuristic counts three slots per SM) against HEAD 160be28
# (A, two per SM): the decode grid A B A B, then split sweeps at 1x32k of both.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s34/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
for r in 1 2; do
  for v in A B; do
    timeout 120 /tmp/z/attnkit_$v bench --device cuda --suite decode --out $W/${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "$v r$r rc=$? ${SECONDS}s" >> $S
    save
  done
done
for v in A B; do
  for n in 32 48 64 80 96 128; do
    timeout 60 /tmp/z/attnkit_$v bench --device cuda --suite decode --decode-grid 1x32768 --splits $n --out $W/sweep_${v}_s$n.jsonl > /dev/null 2>> $W/err.txt
  done
  echo "sweep $v rc=$? ${SECONDS}s" >> $S
  save
done
cat $S
