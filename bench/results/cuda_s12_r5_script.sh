#!/bin/bash
# s12 r5: CPU_FLASH's direct path up to 32 (r32) or 64 (r64) rows against HEAD on the H200 host's
# CPU: the bench prefill suite, 4 alternating rounds; then the one-thread drivers (cache in L2):
# GQA 17/24/32 decode (drv_r16 = HEAD's rule, drv_r32), chunked prefill QL 8/16/32 over 4096 keys
# with GQA 4 (pre_r16/r32/r64), two rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s12/bin5.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
for r in 1 2 3 4; do for v in head r32 r64; do /tmp/b/attnkit_$v bench --device cpu --suite prefill --out /tmp/pre_${v}_$r.jsonl > /dev/null 2>&1; done; done; echo "prefill done ${SECONDS}s"
python3 - <<'PY' > $OUT/s12r5_h200host_prefill_ab.jsonl
import json, glob
for f in sorted(glob.glob('/tmp/pre_*.jsonl')):
    _, v, r = f.split('/')[-1][:-6].split('_')
    for l in open(f):
        d = json.loads(l); d['ab'] = v; d['round'] = int(r); print(json.dumps(d))
PY
{
for r in 1 2; do
  for g in 17 24 32; do for v in r16 r32; do echo "decode g=$g $v $(taskset -c 3 /tmp/b/drv_$v 1 2048 2000 1 $g | tail -1)"; done; done
  for ql in 8 16 32; do for v in r16 r32 r64; do echo "prefill QL=$ql $v $(QL=$ql taskset -c 3 /tmp/b/pre_$v 1 4096 1000 1 4 | tail -1)"; done; done
done
} > $OUT/s12r5_h200host_drivers.txt 2>&1
echo "drivers done ${SECONDS}s"; cat $OUT/s12r5_h200host_drivers.txt
