#!/bin/bash
# s19 r3: CPU_FLASH's split rule by cost against the rule before it (attnkit_oldrule: a0a207b's
# backend with this session's bench, so that both run the ragged row) on the H200 host's 16 cores:
# the full CPU decode suite, three alternating rounds. Then the CUDA_MLA suite with the layer loop.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s19a/bin.txz -C /tmp/b && tar xJf .devbin/s19b/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
tag() { python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $1 $2 >> $3; rm -f /tmp/r.jsonl; }
for round in 1 2 3; do
  for b in attnkit_oldrule attnkit; do
    timeout 100 /tmp/b/$b bench --device cpu --suite decode --out /tmp/r.jsonl > /dev/null 2>&1; echo "decode $b round $round rc=$? ${SECONDS}s"; tag $b $round $OUT/cpu_decode_ab.jsonl
  done
done
python3 - $OUT/cpu_decode_ab.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    t={}
    for l in open(f):
        r=json.loads(l)
        if r['kind']=='ceiling': k=('ceiling',r['name'])
        else: k=(r['kind'],r.get('batch_lens') or f"{r['batch']}x{r['kv_len']}",r['q_len'],r['heads'],r['kv_heads'],r['dtype'][:4],r['kv_dtype'][:4],r['page'])
        v=r.get('gflops') if r['kind']=='ceiling' and 'gflops' in r else r.get('gbs')
        t.setdefault(k,{}).setdefault(r['build'],[]).append(round(v or 0,1) if r.get('verified',True) else 'FAIL')
    for k,v in t.items(): print(k, v)
PY
timeout 150 /tmp/b/attnkit bench --device cuda --suite mla --out $OUT/mla.jsonl > /dev/null 2>$OUT/mla.err; echo "mla suite rc=$? ${SECONDS}s"; tail -3 $OUT/mla.err
python3 - $OUT/mla.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='mla_decode': continue
    lens=r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}"
    print(lens, r['heads_q'], r['kv_dtype'][:4], f"write {r['ms']*1e3:.1f} graph {r['ms_graph_clean_l2']*1e3:.1f} loop {r['ms_layer_loop']*1e3:.1f} x{r['layers']} {r['GBps_layer_loop']:.0f}GB/s {r['TFLOPs']:.0f}TF ok {r['ok']}")
PY
