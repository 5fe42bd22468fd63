#!/bin/bash
# s14 r5: v3c (ping-pong consumers; P V of tile t issued with S of tile t + 1; K copied a tile ahead of V): every CUDA GPU test (cases under v2 and
# v3), the conformance suite, verified runs (v3's Hopper form in gemma-2-9b bf16 and the default
# model), compute-sanitizer on small tests that run both generations, then the prefill suite under
# v2 and v3 beside the torch peers (cuDNN, FA2) in the same call.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s14/bin5.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 60 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|Expected|Which|relative|lse|non-finite" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -2 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
timeout 240 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'cells|FAILED|Failure' $OUT/conformance.log | cut -c1-220 | head -12
{
for args in "" "--model gemma-2-9b --requests 4 --prompt-len 300 --decode-steps 8" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200" "--model llama-3.1-8b --requests 2 --prompt-len 2000 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 120 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/5 rc=0 ${SECONDS}s"; grep -E "^-- |^rc=|CUDA_FLASH|verif|error" $OUT/runs.log | cut -c1-200 | head -40
for tool in memcheck racecheck synccheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.PrefillFp16Head64PageOne:CudaFlash.NonCausalMqaHead256:CudaFlash.WindowSoftcapAlibiSinks' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
for v in v2 v3; do timeout 90 /tmp/b/attnkit bench --device cuda --suite prefill --variant $v --out /tmp/p_$v.jsonl > /dev/null 2>&1; echo "bench $v rc=$? ${SECONDS}s"; cat /tmp/p_$v.jsonl >> $OUT/bench_prefill.jsonl; done
PYTHONUNBUFFERED=1 timeout 200 python3 bench/peers_gpu.py --suite prefill --out /tmp/peers.jsonl > /tmp/peers.log 2>&1; echo "peers rc=$? ${SECONDS}s"; tail -2 /tmp/peers.log; cat /tmp/peers.jsonl >> $OUT/bench_prefill.jsonl
python3 - <<'PY' $OUT/bench_prefill.jsonl
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
key=lambda r:(r.get('head_dim'),r.get('seq_q'),r.get('causal'))
t={}
for r in rows:
    if r.get('kind')!='prefill': continue
    name=r.get('variant') if r.get('impl')=='attnkit' else r.get('impl')
    t.setdefault(key(r),{})[name]=r.get('TFLOPs')
for k in sorted(t): print(k, {n:round(v) for n,v in t[k].items() if v})
PY
