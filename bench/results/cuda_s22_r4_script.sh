#!/bin/bash
# s22 device run 4: r2's 8-row question again (kAmxFewRows 4 = B, 8 = C), two more alternating
# rounds on 16 cores and two on 2 cores of the H200 host's CPU.
cd "$(dirname "$0")" && mkdir -p x && tar xJf bin4.txz -C x && cd x
S=$OUT/summary.txt
: > $S
run() {  # binary, round, cores
  local pre=""; [ "$3" = 2 ] && pre="taskset -c 0,1"
  $pre ./attnkit_$1 bench --device cpu --suite decode 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
  r=json.loads(l); r['ab']='$1'; r['round']=$2; r['cores']=$3; print(json.dumps(r))" >> $OUT/host_amx_few8_ab.jsonl
  echo "round $2 $1 cores $3 done $(date +%T)" >> $S
}
for i in 1 2; do for b in B C; do run $b $i 16; run $b $i 2; done; done
cat $S
