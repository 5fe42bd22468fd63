#!/bin/bash
# s13 r6: the final build (the K-tensor size guard added to r5's code): all GPU tests, the
# conformance suite, verified runs, the sanitizers on the MLA tests, the MLA bench (auto form
# twice, the wide form once) and the quick decode suite.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s13/bin6.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_brief=1 > $OUT/tests.log 2>&1; echo "backends rc=$? $(tail -2 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head
/tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'cells checked|FAILED|Failure' $OUT/conformance.log | cut -c1-220 | head -20
{
/tmp/b/attnkit run --device cuda --model deepseek-v3 --verify; echo "rc=$?"
/tmp/b/attnkit run --device cuda --model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 --verify; echo "rc=$?"
/tmp/b/attnkit run --device cuda --model glm-4.7-flash --verify; echo "rc=$?"
/tmp/b/attnkit run --device cuda --verify; echo "rc=$?"
} > $OUT/runs.log 2>&1; echo "runs: $(grep -E '^rc=|verification:' $OUT/runs.log | tr '\n' ' ') ${SECONDS}s"
for tool in memcheck racecheck synccheck initcheck; do
  compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Mla*' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
for f in auto wide auto; do
  /tmp/b/attnkit bench --device cuda --suite mla --mla-form $f --out /tmp/rows.jsonl > /dev/null 2>&1; echo "mla $f rc=$? ${SECONDS}s"
  cat /tmp/rows.jsonl >> $OUT/bench_mla.jsonl
done
/tmp/b/attnkit bench --device cuda --suite decode --quick --out $OUT/bench_decode_quick.jsonl > /dev/null 2>&1; echo "decode quick rc=$? ${SECONDS}s"
python3 - <<'PY' $OUT/bench_mla.jsonl $OUT/bench_decode_quick.jsonl
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='mla_decode': continue
    k=(r['heads_q'],r['batch'],r['seq_k'],r['kv_dtype'])
    d[k].append(f"{r['mla_form']}:{r['ms']*1e3:.0f}us/{r['TFLOPs']:.0f}TF/{r['GBps']:.0f}GBs/{r['check_rel_err']:.1e}{'' if r['ok'] else '!BAD'}")
for k in sorted(d): print(k, ' '.join(d[k]))
for l in open(sys.argv[2]):
    r=json.loads(l)
    if r.get('kind')!='decode': continue
    print(r['batch'],r['seq_k'],r['heads_kv'],r['kv_dtype'],r['page'],f"{r['ms']*1e3:.1f}us {r['GBps']:.0f}GBs clean {r['GBps_clean_l2']:.0f}")
PY
