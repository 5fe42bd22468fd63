#!/bin/bash
# s28 device run 4 (measure): speculative decode rows (bench --decode-q, new). The decode form
# takes at most 16 packed rows a sequence; above that a prefill form runs. bin4's throwaway
# ATTNKIT_X_DECODE_ROWS lets the decode form take more rows in row blocks of 16 (each block's
# CTA reads the sequence's K/V; its neighbours in the grid read the same lines from L2).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s28/bin4.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
G=1x32768,16x8192,64x4096
timeout 100 /tmp/z/attnkit bench --device cuda --suite decode --quick --decode-grid $G --decode-q 1 --out $W/q1.jsonl > /dev/null 2>>$W/err.txt
echo "q1 rc=$? ${SECONDS}s" >> $S
for r in 1 2; do
  for q in 4 8; do
    for k in 16 64; do
      ATTNKIT_X_DECODE_ROWS=$k timeout 100 /tmp/z/attnkit bench --device cuda --suite decode --quick --decode-grid $G --decode-q $q --out $W/q${q}_rows${k}_r$r.jsonl > /dev/null 2>>$W/err.txt
      echo "q$q rows$k round $r rc=$? ${SECONDS}s" >> $S
    done
  done
done
python3 - >> $S <<'PY'
import json, glob, collections
rows = collections.defaultdict(list)
for f in sorted(glob.glob('/tmp/w/q*.jsonl')):
    tag = f.split('/')[-1].split('_r')[0].replace('.jsonl','')
    for l in open(f):
        x = json.loads(l)
        if x.get('kind') != 'decode': continue
        rows[(x['heads_kv'], x['kv_dtype'], x['batch'], x['seq_k'], x['seq_q'])].append((tag, round(x['ms']*1e3,1), round(x['ms_layer_loop']*1e3,1), x['form'], x['splits'], x['ok'], '%.1e' % x['check_rel_err']))
for k in sorted(rows): print(k, rows[k])
PY
cd $W && tar czf $OUT/r4.tgz .
cat $S
