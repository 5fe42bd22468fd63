#!/bin/bash
# s12 r7: 64-row items on the H200 host's 16 cores: "final" (packed path above 32 rows) against
# direct scores with packed P.V (ds64_pv32) and direct scores and P.V (ds64_pv64); the bench
# prefill suite, 5 alternating rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s12/bin7.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
for r in 1 2 3 4 5; do for v in final ds64_pv32 ds64_pv64; do /tmp/b/attnkit_$v bench --device cpu --suite prefill --out /tmp/pre_${v}_$r.jsonl > /dev/null 2>&1; done; done; echo "prefill done ${SECONDS}s"
python3 - <<'PY' > $OUT/s12r7_h200host_prefill_ab.jsonl
import json, glob
for f in sorted(glob.glob('/tmp/pre_*.jsonl')):
    name = f.split('/')[-1][4:-6]; v, r = name.rsplit('_', 1)
    for l in open(f):
        d = json.loads(l); d['ab'] = v; d['round'] = int(r); print(json.dumps(d))
PY
