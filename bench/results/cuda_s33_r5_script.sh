#!/bin/bash
# s33 device run 5: A/B of the 16-bit decode form's stage count at heads <= 128 (A: HEAD, three
# 64-key stages, two CTAs per SM; B: four, one CTA per SM, the split counts re-planned for it),
# the whole decode suite, alternating A B A B; run 4's tests of HEAD first.
cd "$(dirname "$0")/../.." && bash bench/results/cuda_s33_r4_script.sh
rm -rf /tmp/z5 && mkdir -p /tmp/z5
tar xJf .devbin/s33/bin4.txz -C /tmp/z5 && tar xJf .devbin/s33/bin5.txz -C /tmp/z5
export LD_LIBRARY_PATH=/tmp/z5/lib
W=/tmp/w5 S=/tmp/w5/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary5.txt; tar czf $OUT/r5.tgz -C $W . ; }
for r in 1 2; do
  for v in A B; do
    bin=/tmp/z5/attnkit; [ $v = B ] && bin=/tmp/z5/attnkit_B
    timeout 200 $bin bench --device cuda --suite decode --out $W/${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "$v r$r rc=$? ${SECONDS}s" >> $S
    save
  done
done
cat $S
