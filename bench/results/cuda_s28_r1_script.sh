#!/bin/bash
# s28 device run 1 (measure): chunked-prefill steps (bench --suite mixed, new): the whole batch in
# one call against its decode and prefill parts as two calls, heads 128 and 256.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s28/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $S
timeout 200 /tmp/z/attnkit bench --device cuda --suite mixed --out $W/mixed_d128.jsonl > $W/mixed_d128.log 2>&1
echo "mixed d128 rc=$? ${SECONDS}s" >> $S
timeout 200 /tmp/z/attnkit bench --device cuda --suite mixed --decode-head 256 --out $W/mixed_d256.jsonl > $W/mixed_d256.log 2>&1
echo "mixed d256 rc=$? ${SECONDS}s" >> $S
python3 - >> $S <<'PY'
import json
for f in ['/tmp/w/mixed_d128.jsonl','/tmp/w/mixed_d256.jsonl']:
    try: rows=[json.loads(l) for l in open(f)]
    except Exception as e: print(f, e); continue
    for r in rows:
        if r.get('kind')!='mixed': continue
        print(f"{r['head_dim']} {r['heads_q']}/{r['heads_kv']} {r['kv_dtype']:9s} {r['batch_lens']:16s} q{r['seq_q']:5d} one {r['ms']*1e3:8.1f} two {r['ms_two_calls']*1e3:8.1f} dec {r['ms_decode_part']*1e3:7.1f} pre {r['ms_prefill_part']*1e3:7.1f} clean one {r['ms_clean_l2']*1e3:7.1f} two {r['ms_two_calls_clean_l2']*1e3:7.1f} form {r['form']}/{r['form_decode_part']}/{r['form_prefill_part']} splits {r['splits']}/{r['decode_part_splits']}/{r['prefill_part_splits']} err {r['check_rel_err']:.1e}/{r['check_rel_err_parts']:.1e}")
PY
cd $W && tar czf $OUT/r1.tgz *.jsonl *.log summary.txt
cat $S
