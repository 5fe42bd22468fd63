#!/bin/bash
# s20 r4: the final binary (B: fp8 decode form at heads 129..256) on the head-256 decode grid beside
# the peers (cuDNN, FA2 through SDPA, contiguous bf16) in the same call, and the default model's
# verified run.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s20/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
S=$OUT/summary.txt
timeout 120 /tmp/b/attnkit bench --device cuda --suite decode --decode-head 256 --out $OUT/decode256.jsonl > /dev/null 2>&1; echo "decode256 rc=$? ${SECONDS}s" >> $S
timeout 200 python3 bench/peers_gpu.py --suite decode --decode-head 256 --out $OUT/peers_decode256.jsonl > /dev/null 2>$OUT/peers.err; echo "peers rc=$? ${SECONDS}s" >> $S; tail -3 $OUT/peers.err >> $S
timeout 60 /tmp/b/attnkit run --device cuda --verify > $OUT/run_default.log 2>&1; echo "run rc=$? $(grep -c OK $OUT/run_default.log) OK lines ${SECONDS}s" >> $S
cat $S
python3 - $OUT/decode256.jsonl $OUT/peers_decode256.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')!='decode': continue
        lens=r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}"
        g=lambda k: f"{r[k]*1e3:.1f}" if k in r else '-'
        print(r.get('impl','attnkit'), lens, r['heads_kv'], r['kv_dtype'][:4], r.get('page'), r.get('form'), 's', r.get('splits'), 'us', g('ms'), f"{r.get('GBps',0):.0f}", 'loop', g('ms_layer_loop'), 'probe', g('probe_ms'), r.get('ok', r.get('error','')))
PY
