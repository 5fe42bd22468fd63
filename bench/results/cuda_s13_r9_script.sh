#!/bin/bash
# s13 r9: the Hopper form with 32-key tiles in a 4-stage ring (three tiles in flight, 108 KB per
# SM, against one 72 KB tile with 64-key tiles and 2 stages) and no end-of-iteration barrier (the
# next tile's copy is issued after the top barrier): MLA GPU tests, CUDA_MLA conformance,
# memcheck/racecheck on the MLA tests, then r8's binary (bin7) against this one (bin9) on the MLA
# suite, two alternating rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b7 /tmp/b && tar xzf .devbin/s13/bin7_attnkit.tgz -C /tmp/b7 && tar xzf .devbin/s13/bin9.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "cuda tests rc=$? $(tail -2 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"; grep -E "FAILED|Failure|relative|Expected|Which" $OUT/tests.log | head -20
/tmp/b/attnkit_test_conformance --gtest_filter='*CUDA_MLA*' > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'cells checked|FAILED' $OUT/conformance.log | cut -c1-200
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Mla*' > $OUT/san_$tool.log 2>&1; echo "$tool rc=$? $(grep SUMMARY $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
for r in 1 2; do for v in 7 9; do
  d=/tmp/b; [ $v = 7 ] && d=/tmp/b7
  $d/attnkit bench --device cuda --suite mla --out /tmp/rows.jsonl > /dev/null 2>&1; echo "bin$v r$r rc=$? ${SECONDS}s"
  python3 -c "import json; [print(json.dumps(dict(json.loads(l), binary='bin$v', round=$r))) for l in open('/tmp/rows.jsonl')]" >> $OUT/bench_ab.jsonl
done; done
python3 - <<'PY' $OUT/bench_ab.jsonl
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='mla_decode': continue
    k=(r['heads_q'],r['batch'],r['seq_k'],r['kv_dtype'])
    d[k].append(f"{r['binary']}:{r['ms']*1e3:.0f}us/s{r['splits']}/{r['check_rel_err']:.1e}{'' if r['ok'] else '!BAD'}")
for k in sorted(d): print(k, ' '.join(d[k]))
PY
