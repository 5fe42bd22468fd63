#!/bin/bash
# s12 r2: e4m3 -> half conversion in the decode form by integer ops (value * 2^-8, the scales
# take 2^8) instead of cvt.rn.f16x2.e4m3x2: e3 K and V, e1 K only, e2 V only; verified fp8 runs,
# then the decode suite head/e3/e1/e2 alternating, 2 rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s12/bin2.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
for v in e3 e1 e2; do
  /tmp/b/attnkit_$v run --device cuda --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 --verify > $OUT/run_$v.log 2>&1; echo "run $v rc=$? $(grep -E 'verification' $OUT/run_$v.log | tail -1)"
done
for round in 1 2; do
  for v in head e3 e1 e2; do
    timeout 100 /tmp/b/attnkit_$v bench --device cuda --suite decode --out $OUT/ab_${v}_$round.jsonl > /dev/null 2>&1; echo "round $round $v rc=$? ${SECONDS}s"
  done
done
