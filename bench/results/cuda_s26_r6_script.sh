#!/bin/bash
# s26 device run 6 (measure, run 5's binary): the prefill grid under sliding windows of 64..2048
# tokens as planned, and for 256, 1024 and 2048 also with --hopper-any-length (where the head-64
# rule's crossover lies under a window), one round.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s26/bin5.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0 && : > $S
for w in 64 256 512 1024 2048; do
  $B bench --device cuda --suite prefill --prefill-window $w --out $W/win${w}_planned.jsonl > /dev/null 2>>$W/err.txt
  echo "window $w planned rc=$? ${SECONDS}s" >> $S
  case $w in 256|1024|2048)
    $B bench --device cuda --suite prefill --prefill-window $w --hopper-any-length --out $W/win${w}_any.jsonl > /dev/null 2>>$W/err.txt
    echo "window $w any-length rc=$? ${SECONDS}s" >> $S ;;
  esac
done
cat $S; tar czf $OUT/r6.tgz -C $W .
