#!/bin/bash
# s19 r4 (measure): decode at head 256 (no decode form: the v2 prefill form or v3's Hopper form
# runs it), the default grid plus the ragged batch, beside the peers at head 256.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s19c/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 200 /tmp/b/attnkit bench --device cuda --suite decode --decode-head 256 --out $OUT/decode256.jsonl > /dev/null 2>$OUT/decode256.err; echo "decode suite rc=$? ${SECONDS}s"; tail -3 $OUT/decode256.err
timeout 150 python3 bench/peers_gpu.py --suite decode --decode-head 256 --out $OUT/peers_decode256.jsonl > /dev/null 2>$OUT/peers.err; echo "peers rc=$? ${SECONDS}s"; tail -3 $OUT/peers.err
python3 - $OUT/decode256.jsonl $OUT/peers_decode256.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')=='device': print(r)
        if r.get('kind')!='decode': continue
        name=r.get('impl','attnkit')
        lens=r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}"
        g=lambda k: f"{r[k]*1e3:.1f}" if k in r else '-'
        print(name, lens, r['heads_kv'], r['kv_dtype'][:4], r.get('page'), r.get('form'), 'splits', r.get('splits'), 'us write', g('ms'), f"{r.get('GBps',0):.0f}", 'probe', g('probe_ms'), 'loop', g('ms_layer_loop'), f"{r.get('GBps_layer_loop',0):.0f}", 'ok', r.get('ok', r.get('error','')))
PY
