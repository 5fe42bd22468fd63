#!/bin/bash
# s15 r3: C (v3d: FA3's intra-warpgroup overlap in the Hopper consumers, wgmma descriptors advanced
# by one add) verified: every CUDA GPU test, the conformance suite, five verified runs, four
# compute-sanitizer tools on small tests that run both generations; then the prefill suite under
# v2 and v3 (C), v3 again with D (C's kernels, the Hopper form at head 64 from any key count:
# kHopperHead64MinKeys = 0), and the torch peers (cuDNN, FA2) in the same call.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s15/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 60 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/hopper_test.log | head
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
timeout 240 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "" "--model gemma-2-9b --requests 4 --prompt-len 300 --decode-steps 8" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200" "--model llama-3.1-8b --requests 2 --prompt-len 2000 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 120 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/5 rc=0 ${SECONDS}s"; grep -E "^-- |^rc=|verif" $OUT/runs.log | cut -c1-160 | head -20
for tool in memcheck racecheck synccheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.PrefillFp16Head64PageOne:CudaFlash.NonCausalMqaHead256:CudaFlash.WindowSoftcapAlibiSinks' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
rm -f /tmp/all.jsonl
for v in v2 v3; do timeout 90 /tmp/b/attnkit bench --device cuda --suite prefill --variant $v --out /tmp/p_$v.jsonl > /dev/null 2>&1; echo "bench $v rc=$? ${SECONDS}s"; cat /tmp/p_$v.jsonl >> /tmp/all.jsonl; done
timeout 90 /tmp/b/attnkit_D bench --device cuda --suite prefill --variant v3 --out /tmp/p_D.jsonl > /dev/null 2>&1; echo "bench D rc=$? ${SECONDS}s"
python3 -c "import json; [print(json.dumps(dict(json.loads(l), build='D'))) for l in open('/tmp/p_D.jsonl')]" >> /tmp/all.jsonl
PYTHONUNBUFFERED=1 timeout 200 python3 bench/peers_gpu.py --suite prefill --out /tmp/peers.jsonl > /tmp/peers.log 2>&1; echo "peers rc=$? ${SECONDS}s"; tail -2 /tmp/peers.log; cat /tmp/peers.jsonl >> /tmp/all.jsonl
cp /tmp/all.jsonl $OUT/bench_prefill.jsonl
python3 - $OUT/bench_prefill.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    name=r.get('build') or (r.get('variant') if r.get('impl')=='attnkit' else r.get('impl'))
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[name]=r.get('TFLOPs')
for k in sorted(t): print(k, {n:round(v) for n,v in t[k].items() if v})
PY
