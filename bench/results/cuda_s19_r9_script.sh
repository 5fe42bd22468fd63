#!/bin/bash
# s19 r9: the final bench binary (d58534c: the layer loop sized within free device memory): the
# quick decode suite (1x32768 and 64x4096, page 16) and the peer script's quick decode rows.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s19g/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 100 /tmp/b/attnkit bench --device cuda --suite decode --quick --out $OUT/decode_quick.jsonl > /dev/null 2>$OUT/decode.err; echo "decode rc=$? ${SECONDS}s"; tail -2 $OUT/decode.err
timeout 80 python3 bench/peers_gpu.py --suite decode --quick --out $OUT/peers_quick.jsonl > /dev/null 2>$OUT/peers.err; echo "peers rc=$? ${SECONDS}s"; tail -2 $OUT/peers.err
python3 - $OUT/decode_quick.jsonl $OUT/peers_quick.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')!='decode': continue
        print(r.get('impl','attnkit'), f"{r['batch']}x{r['seq_k']}", r['heads_kv'], r['kv_dtype'][:4], 'write', round(r.get('ms',0)*1e3,1), 'loop', round(r.get('ms_layer_loop',0)*1e3,1), 'x', r.get('layers'), r.get('ok', r.get('error', '')), r.get('layer_loop', ''))
PY
