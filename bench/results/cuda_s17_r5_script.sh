#!/bin/bash
# s17 r5: the session's build (3ebbca6's fp8 producer: no proxy fence, immediate offsets; the
# Hopper form's split count with one CTA per SM). First the new plan test on a build without the
# fix (it must fail: two splits), then on this build: the Hopper tests, every CUDA GPU test,
# conformance, four verified runs, four sanitizers on the small fp8 Hopper test and
# Fp8E4m3PerTensor; the table's rows: v3 fp8 prefill two rounds, v3 bf16 and v2 fp8 once.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s17e/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 100 /tmp/b/attnkit_test_backends_nofix --gtest_filter='CudaFlash.HopperHead64SplitsCountOneCtaPerSm' > $OUT/nofix_test.log 2>&1; echo "plan test without the fix rc=$? (expected 1) ${SECONDS}s"; grep -E "Failure|splits|Which is|FAILED" $OUT/nofix_test.log | head -6
timeout 100 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Hopper*' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper tests rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|actual|OK \]" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 150 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > /tmp/tests.log 2>&1; echo "tests rc=$? $(tail -1 /tmp/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" /tmp/tests.log | head -20
timeout 200 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model llama-3.1-8b --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 2000 --decode-steps 4" "--model qwen3-8b --kv-cache-dtype fp8_e5m2 --requests 3 --prompt-len 700 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 100 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/4 rc=0 ${SECONDS}s"
for tool in memcheck racecheck synccheck initcheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperFp8FormSmall:CudaFlash.Fp8E4m3PerTensor' > /tmp/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1) ${SECONDS}s"; tail -c 20000 /tmp/san_$tool.log > $OUT/san_$tool.log
done
rm -f /tmp/all.jsonl
for cfg in "v3 fp8_e4m3 1" "v3 bfloat16 1" "v3 fp8_e4m3 2" "v2 fp8_e4m3 1"; do set -- $cfg
  timeout 100 /tmp/b/attnkit bench --device cuda --suite prefill --variant $1 --prefill-kv $2 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $cfg rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=int(sys.argv[1])))) for l in open('/tmp/p.jsonl')]" $3 >> /tmp/all.jsonl
done
cp /tmp/all.jsonl $OUT/bench_prefill.jsonl
python3 - $OUT/bench_prefill.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    name=f"{r['variant']}-{r['kv_dtype'][:4]}" + (f".{r['round']}" if r['variant']=='v3' and r['kv_dtype']!='bfloat16' else '')
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[name]=(round(r.get('TFLOPs')), r.get('form')) if r['ok'] else 'FAIL'
for k in sorted(t): print(k, t[k])
PY
