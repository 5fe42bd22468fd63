#!/bin/bash
# s19 r5 (measure): decode at head 256 on v2's prefill form (--variant v2) against r4's v3 Hopper
# form, which over fp8 ran slower than over bf16.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s19c/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 200 /tmp/b/attnkit bench --device cuda --suite decode --decode-head 256 --variant v2 --out $OUT/decode256_v2.jsonl > /dev/null 2>$OUT/decode256_v2.err; echo "decode suite rc=$? ${SECONDS}s"; tail -3 $OUT/decode256_v2.err
python3 - $OUT/decode256_v2.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')!='decode': continue
        lens=r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}"
        g=lambda k: f"{r[k]*1e3:.1f}" if k in r else '-'
        print(lens, r['heads_kv'], r['kv_dtype'][:4], r.get('page'), r.get('form'), 'splits', r.get('splits'), 'us write', g('ms'), f"{r.get('GBps',0):.0f}", 'loop', g('ms_layer_loop'), f"{r.get('GBps_layer_loop',0):.0f}", 'ok', r.get('ok'))
PY
