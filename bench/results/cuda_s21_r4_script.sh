#!/bin/bash
# s21 r4: v3 (the Hopper form at head 256, bf16) on the skewed grid with forced split counts
# 1..6 against the plan's own (skewed_uniform_splits), one round, write protocol, quick pages.
cd "$(dirname "$0")" && mkdir -p x && tar xJf bin.txz -C x && export LD_LIBRARY_PATH=$PWD/x/lib
G="1x65536+63x1024,1x32768+15x2048,64x1024+1x32768,2x16384+126x512,1x32768+1x1024,16x8192"
for s in plan 1 2 3 4 6; do
  extra=""; [ $s != plan ] && extra="--splits $s"
  rm -f /tmp/r.jsonl
  timeout 120 ./x/attnkit bench --device cuda --suite decode --quick --decode-head 256 --decode-grid "$G" $extra --out /tmp/r.jsonl > /dev/null 2>&1; echo "splits $s rc=$?"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), forced=sys.argv[1]))) for l in open('/tmp/r.jsonl')]" $s >> $OUT/skewed_forced.jsonl
done
python3 - $OUT/skewed_forced.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='decode' or not r['kv_dtype'].startswith('bf'): continue
    k=(r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}", r['heads_kv'], r['page'], r['form'])
    t.setdefault(k,[]).append(f"{r['forced']}:{r['ms']*1e3:.1f}(s{r['splits']})")
for k in t: print(k, ' '.join(t[k]))
PY
