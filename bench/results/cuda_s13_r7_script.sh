#!/bin/bash
# s13 r7: the plan picks CUDA_MLA's form and sizes the grid and split count with that form's CTA
# shape (64-row CTAs, one per SM, for the Hopper form; r6 planned every MLA call with the wide
# form's 32-row, two-per-SM CTAs). GPU tests, conformance, verified runs, memcheck on the MLA
# tests, then r6's binary (bin6) against this one (bin7) on MLA shapes, two alternating rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b6 /tmp/b && tar xzf .devbin/s13/bin6_attnkit.tgz -C /tmp/b6 && tar xzf .devbin/s13/bin7.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_brief=1 > $OUT/tests.log 2>&1; echo "backends rc=$? $(tail -2 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head
/tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells checked|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head
{
/tmp/b/attnkit run --device cuda --model deepseek-v3 --verify; echo "rc=$?"
/tmp/b/attnkit run --device cuda --model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 --verify; echo "rc=$?"
/tmp/b/attnkit run --device cuda --model glm-4.7-flash --verify; echo "rc=$?"
} > $OUT/runs.log 2>&1; echo "runs: $(grep -E '^rc=|verification:' $OUT/runs.log | tr '\n' ' ') ${SECONDS}s"
compute-sanitizer --tool memcheck --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Mla*' > $OUT/san_memcheck.log 2>&1; echo "memcheck rc=$? $(grep SUMMARY $OUT/san_memcheck.log | tail -1) ${SECONDS}s"
for r in 1 2; do for v in 6 7; do
  d=/tmp/b; [ $v = 6 ] && d=/tmp/b6
  LD_LIBRARY_PATH=/tmp/b/lib $d/attnkit bench --device cuda --suite mla --decode-grid 1x32768,3x32768,8x16384,64x4096 --out /tmp/rows.jsonl > /dev/null 2>&1; echo "bin$v r$r rc=$? ${SECONDS}s"
  python3 -c "import json; [print(json.dumps(dict(json.loads(l), binary='bin$v', round=$r))) for l in open('/tmp/rows.jsonl')]" >> $OUT/bench_plan_ab.jsonl
done; done
python3 - <<'PY' $OUT/bench_plan_ab.jsonl
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='mla_decode': continue
    k=(r['heads_q'],r['batch'],r['seq_k'],r['kv_dtype'])
    d[k].append(f"{r['binary']}:{r['ms']*1e3:.0f}us/s{r['splits']}{'' if r['ok'] else '!BAD'}")
for k in sorted(d): print(k, ' '.join(d[k]))
PY
