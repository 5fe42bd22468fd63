#!/bin/bash
# s17 r1: does the fp8 producer's fence.proxy.async (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S in SASS)
# wait for its own cp.async copies still in flight (the raw ring's look-ahead)? B drops it (the
# consumers' fence after each full-barrier wait orders the producer's stores before wgmma, as for
# the 16-bit form's cp.async writes); C also drops the consumers' fences (timing only, not a legal
# build). B verified: the Hopper test twice, CUDA GPU tests, conformance, three fp8 verified runs,
# racecheck and synccheck; A (HEAD) / B / C alternating, two rounds of the fp8 prefill suite.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s17a/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 100 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' --gtest_repeat=2 > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|actual" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 150 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > /tmp/tests.log 2>&1; echo "tests rc=$? $(tail -1 /tmp/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" /tmp/tests.log | head -20
timeout 200 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model llama-3.1-8b --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 2000 --decode-steps 4" "--model qwen3-8b --kv-cache-dtype fp8_e5m2 --requests 3 --prompt-len 700 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 100 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/3 rc=0 ${SECONDS}s"
for tool in racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Fp8E4m3PerTensor:CudaFlash.WindowSoftcapAlibiSinks' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
rm -f /tmp/all.jsonl
for round in 1 2; do for bin in attnkit_A attnkit attnkit_C; do
  timeout 90 /tmp/b/$bin bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $bin round $round rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/p.jsonl')]" $bin $round >> /tmp/all.jsonl
  cp /tmp/all.jsonl $OUT/ab_prefill_fp8.jsonl
done; done
python3 - $OUT/ab_prefill_fp8.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    b={'attnkit_A':'A','attnkit_C':'C'}.get(r['build'],'B')
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[f"{b}{r['round']}"]=round(r.get('TFLOPs')) if r['ok'] else 'FAIL'
for k in sorted(t): print(k, t[k])
PY
