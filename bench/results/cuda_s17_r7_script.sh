#!/bin/bash
# s17 r7: T = the fp8 producer's raw copies as TMA bulk copies (one run of a row per thread, an
# mbarrier per raw slot) instead of cp.async: fewer load/store-queue instructions beside the
# consumers' shuffles (r6: their row-max shuffles waited 3x longer over fp8 than over bf16).
# T verified: the Hopper tests, every CUDA GPU test, conformance, four verified runs, four
# sanitizers on the small fp8 Hopper test and Fp8E4m3PerTensor; H (dac0265) / T alternating, two
# rounds of the fp8 prefill suite; T's bf16 prefill once.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s17f/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 100 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Hopper*' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper tests rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|actual" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 150 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > /tmp/tests.log 2>&1; echo "tests rc=$? $(tail -1 /tmp/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" /tmp/tests.log | head -20
timeout 200 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA_FLASH .*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model llama-3.1-8b --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 2000 --decode-steps 4" "--model qwen3-8b --kv-cache-dtype fp8_e5m2 --requests 3 --prompt-len 700 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 100 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/4 rc=0 ${SECONDS}s"
for tool in memcheck racecheck synccheck initcheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperFp8FormSmall:CudaFlash.Fp8E4m3PerTensor' > /tmp/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1) ${SECONDS}s"; tail -c 20000 /tmp/san_$tool.log > $OUT/san_$tool.log
done
rm -f /tmp/all.jsonl
for round in 1 2; do for bin in attnkit_H attnkit; do
  timeout 90 /tmp/b/$bin bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $bin round $round rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/p.jsonl')]" $bin $round >> /tmp/all.jsonl
  cp /tmp/all.jsonl $OUT/ab_prefill_fp8.jsonl
done; done
timeout 90 /tmp/b/attnkit bench --device cuda --suite prefill --variant v3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench bf16 rc=$? ${SECONDS}s"
python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build='attnkit', round=1))) for l in open('/tmp/p.jsonl')]" >> /tmp/all.jsonl
cp /tmp/all.jsonl $OUT/ab_prefill_fp8.jsonl
python3 - $OUT/ab_prefill_fp8.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    b={'attnkit_H':'H'}.get(r['build'],'T')
    name=f"{b}.{r['round']}" if r['kv_dtype']=='fp8_e4m3' else 'bf16'
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[name]=round(r.get('TFLOPs')) if r['ok'] else 'FAIL'
for k in sorted(t): print(k, t[k])
PY
