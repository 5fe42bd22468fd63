#!/bin/bash
# s13 r3: CUDA_MLA's Hopper form (wgmma, 64-row CTAs) beside the wide form: the MLA GPU tests
# (both forms), every GPU test, memcheck/racecheck on the MLA tests, then the MLA bench suite with
# the form forced (ATTNKIT_MLA_FORM=wide / hopper), two alternating rounds, rows in one file.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s13/bin3.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Mla*' > $OUT/mla_tests.log 2>&1; echo "mla tests rc=$? ${SECONDS}s"; grep -E "OK \]|FAILED|Failure|error|Expected|Which|relative" $OUT/mla_tests.log | head -30
/tmp/b/attnkit_test_backends --gtest_brief=1 > $OUT/tests.log 2>&1; echo "backends rc=$? $(tail -2 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.MlaGraph*' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
for r in 1 2; do for f in wide hopper; do
  ATTNKIT_MLA_FORM=$f /tmp/b/attnkit bench --device cuda --suite mla --out /tmp/rows.jsonl > /dev/null 2>&1; echo "$f r$r rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), form='$f', round=$r))) for l in open('/tmp/rows.jsonl')]" >> $OUT/bench_forms.jsonl
done; done
python3 - <<'PY' $OUT/bench_forms.jsonl
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='mla_decode': continue
    k=(r['heads_q'],r['batch'],r['seq_k'],r['kv_dtype'])
    d[k].append(f"{r['form']}:{r['ms']*1e3:.0f}us/{r['TFLOPs']:.0f}TF/{r['GBps']:.0f}GBs{'' if r['ok'] else '!BAD'}")
for k in sorted(d): print(k, ' '.join(d[k]))
PY
