#!/bin/bash
# s22 device run 2: on the H200 host's CPU (AMX), items of up to 4 (B, as committed), 8 (C) or 16
# (D) rows through the few-rows form (with s22's finer prefetch ticks) instead of AMX tiles.
cd "$(dirname "$0")" && mkdir -p x && tar xJf bin2.txz -C x && cd x
S=$OUT/summary.txt
: > $S
run() {  # binary, round, cores
  local pre=""; [ "$3" = 2 ] && pre="taskset -c 0,1"
  $pre ./attnkit_$1 bench --device cpu --suite decode 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
  r=json.loads(l); r['ab']='$1'; r['round']=$2; r['cores']=$3; print(json.dumps(r))" >> $OUT/host_amx_few_rows_ab.jsonl
  echo "round $2 $1 cores $3 done $(date +%T)" >> $S
}
for i in 1 2; do for b in B C D; do run $b $i 16; done; done
for b in B C D; do run $b 1 2; done
cat $S
