#!/bin/bash
# s13 r8: the final build's MLA suite for bench/README's table: the auto form (the plan's pick)
# and the wide form forced, in one call.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s13/bin7.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
for f in auto wide; do
  /tmp/b/attnkit bench --device cuda --suite mla --mla-form $f --out /tmp/rows.jsonl > /dev/null 2>&1; echo "mla $f rc=$? ${SECONDS}s"
  cat /tmp/rows.jsonl >> $OUT/bench_mla.jsonl
done
python3 - <<'PY' $OUT/bench_mla.jsonl
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='mla_decode': print({k:r[k] for k in r if 'GBps' in k}); continue
    print(r['mla_form'], r['heads_q'], r['batch'], r['seq_k'], r['kv_dtype'], r['splits'], f"{r['ms']*1e3:.0f}us {r['TFLOPs']:.0f}TF {r['GBps']:.0f}GBs clean {r['GBps_clean_l2']:.0f} err {r['check_rel_err']:.1e} ok {r['ok']}")
PY
