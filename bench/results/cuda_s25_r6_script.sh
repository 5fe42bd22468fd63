#!/bin/bash
# s25 device run 6 (run 5's binaries, the review build with RowMask): run 2 again, since the
# kMm kernels' SASS changed (every other kernel's did not, run 5). Prefill rows with a 256-token
# image against the same rows without, causal and not, alternating, two rounds each, under v3 and
# v2; the kMm kernels' registers. Every output goes into one archive (the file-count limit).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s25/bin5.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
cuobjdump -res-usage $B 2>&1 | grep -A1 -E "(flash_hopper_kernel.*Lb1EEEv|flash_fwd_kernel.*Lb0ELb1EEEv)" > $W/kmm_res_usage.txt
grep -o "REG:[0-9]* STACK:[0-9]*" $W/kmm_res_usage.txt | sort | uniq -c > $S
for round in 1 2; do
  for v in v3 v2; do
    $B bench --device cuda --suite prefill --variant $v --prefill-image 256 --out $W/image_${v}_r$round.jsonl > /dev/null 2>>$W/err.txt
    $B bench --device cuda --suite prefill --variant $v --out $W/plain_${v}_r$round.jsonl > /dev/null 2>>$W/err.txt
    echo "round $round $v ${SECONDS}s" >> $S
  done
done
cat $S; tar czf $OUT/r6.tgz -C $W .
