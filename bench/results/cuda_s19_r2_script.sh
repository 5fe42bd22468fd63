#!/bin/bash
# s19 r2: CPU_FLASH's split rule by cost against HEAD (a0a207b) on the H200 host's 16 cores: the
# quick CPU bench (all suites; its decode suite ends with the ragged 1x16384+63x256 batch), three
# alternating rounds, then the full decode suite once each (its ragged batch 1x65536+63x1024).
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s19a/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
tag() { python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $1 $2 >> $3; rm -f /tmp/r.jsonl; }
for round in 1 2 3; do
  for b in attnkit_head attnkit; do
    timeout 90 /tmp/b/$b bench --device cpu --quick --out /tmp/r.jsonl > /dev/null 2>&1; echo "quick $b round $round rc=$? ${SECONDS}s"; tag $b $round $OUT/cpu_quick_ab.jsonl
  done
done
for b in attnkit_head attnkit; do
  timeout 200 /tmp/b/$b bench --device cpu --suite decode --out /tmp/r.jsonl > /dev/null 2>&1; echo "decode $b rc=$? ${SECONDS}s"; tag $b 1 $OUT/cpu_decode_ab.jsonl
done
python3 - $OUT/cpu_quick_ab.jsonl $OUT/cpu_decode_ab.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    t={}
    for l in open(f):
        r=json.loads(l)
        if r['kind']=='ceiling': k=('ceiling',r['name'])
        else: k=(r['kind'],r.get('batch_lens') or f"{r['batch']}x{r['kv_len']}",r['q_len'],r['heads'],r['kv_heads'],r['dtype'][:4],r['kv_dtype'][:4],r['page'],r['causal'])
        v=r.get('gflops') if r['kind'] in ('prefill','ceiling') and 'gflops' in r else r.get('gbs')
        t.setdefault(k,{}).setdefault(r['build'],[]).append(round(v or 0,1) if r.get('verified',True) else 'FAIL')
    print(f)
    for k,v in t.items(): print(k, v)
PY
