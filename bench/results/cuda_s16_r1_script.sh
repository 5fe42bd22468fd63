#!/bin/bash
# s16 r1: v3's Hopper prefill form over fp8 caches (heads 64 and 128; the producer converts raw
# tiles into the 16-bit stages) verified: the Hopper test (fp8 cases added), every CUDA GPU test,
# the conformance suite, six verified runs (llama-3.1-8b over fp8 e4m3 added), four
# compute-sanitizer tools on small tests (Fp8E4m3PerTensor runs the fp8 form); then the prefill
# suite over fp8 e4m3 under v3 and v2, and over bf16 under v3, in the same call.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s16/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 90 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|rel|err" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
timeout 240 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200" "--model llama-3.1-8b --requests 2 --prompt-len 2000 --decode-steps 4" "--model llama-3.1-8b --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 2000 --decode-steps 4" "--model qwen3-8b --kv-cache-dtype fp8_e5m2 --requests 3 --prompt-len 700 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 120 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/6 rc=0 ${SECONDS}s"; grep -E "^-- |^rc=|verif|backend" $OUT/runs.log | cut -c1-160 | head -30
for tool in memcheck racecheck synccheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.PrefillFp16Head64PageOne:CudaFlash.NonCausalMqaHead256:CudaFlash.WindowSoftcapAlibiSinks:CudaFlash.Fp8E4m3PerTensor' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
rm -f /tmp/all.jsonl
for cfg in "v3 fp8_e4m3" "v2 fp8_e4m3" "v3 bfloat16"; do set -- $cfg
  timeout 100 /tmp/b/attnkit bench --device cuda --suite prefill --variant $1 --prefill-kv $2 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $cfg rc=$? ${SECONDS}s"; cat /tmp/p.jsonl >> /tmp/all.jsonl
done
cp /tmp/all.jsonl $OUT/bench_prefill.jsonl
python3 - $OUT/bench_prefill.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    name=r['variant']+'/'+r['kv_dtype']+'/'+r['form']
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[name]=(round(r.get('TFLOPs')), r['ok'], '%.1e'%r['check_rel_err'])
for k in sorted(t): print(k, t[k])
PY
