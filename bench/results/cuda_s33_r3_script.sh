#!/bin/bash
# s33 device run 3: A/B of the fp8 decode form's stage count at heads <= 128 (A: caf9148, two
# 128-key stages; B: three, still two CTAs per SM on SM90), the whole decode grid, alternating
# A B A B; the decode tests of B (fp8 forms) at the end.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s33/bin1.txz -C /tmp/z && tar xJf .devbin/s33/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r3.tgz -C $W . ; }
for r in 1 2; do
  for v in A B; do
    bin=/tmp/z/attnkit; [ $v = B ] && bin=/tmp/z/attnkit_B
    timeout 200 $bin bench --device cuda --suite decode --out $W/${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "$v r$r rc=$? ${SECONDS}s" >> $S
    save
  done
done
cat $S
