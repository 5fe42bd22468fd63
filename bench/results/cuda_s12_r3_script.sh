#!/bin/bash
# s12 r3: L2 policy variants on the decode form's K/V copies (all with the shared address through a
# shuffle): v2 evict_first + L2::128B (r1), h3 evict_first without L2::128B, h4 fractional 0.5
# evict_first + L2::128B, h5 v2 on V only; decode suite head/v2/h3/h4/h5 alternating, 2 rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s12/bin3.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
for v in h3 h4 h5; do
  /tmp/b/attnkit_$v run --device cuda --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 --verify > /tmp/run_$v.log 2>&1; echo "run $v rc=$? $(grep -E 'verification' /tmp/run_$v.log | tail -1)"
done
for round in 1 2; do
  for v in head v2 h3 h4 h5; do
    timeout 100 /tmp/b/attnkit_$v bench --device cuda --suite decode --out $OUT/ab_${v}_$round.jsonl > /dev/null 2>&1; echo "round $round $v rc=$? ${SECONDS}s"
  done
done
