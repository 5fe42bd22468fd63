#!/bin/bash
# s13 r4: the Hopper form with S split by keys between the warpgroups (P through a shared tile,
# row maxima and sums exchanged) against r3's form (each warpgroup computes all of S): the MLA GPU
# tests (auto form, and the wide form forced), then the MLA bench suite under --mla-form hopper /
# split, two alternating rounds, rows in one file.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s13/bin4.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Mla*' > $OUT/mla_tests.log 2>&1; echo "mla tests rc=$? ${SECONDS}s"; grep -E "OK \]|FAILED|Failure|error|Expected|Which|relative" $OUT/mla_tests.log | head -30
for r in 1 2; do for f in hopper split; do
  /tmp/b/attnkit bench --device cuda --suite mla --mla-form $f --out /tmp/rows.jsonl > /dev/null 2>&1; echo "$f r$r rc=$? ${SECONDS}s"
  python3 -c "import json; [print(json.dumps(dict(json.loads(l), round=$r))) for l in open('/tmp/rows.jsonl')]" >> $OUT/bench_forms.jsonl
done; done
python3 - <<'PY' $OUT/bench_forms.jsonl
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='mla_decode': continue
    k=(r['heads_q'],r['batch'],r['seq_k'],r['kv_dtype'])
    d[k].append(f"{r['mla_form']}:{r['ms']*1e3:.0f}us/{r['TFLOPs']:.0f}TF/{r['check_rel_err']:.1e}{'' if r['ok'] else '!BAD'}")
for k in sorted(d): print(k, ' '.join(d[k]))
PY
