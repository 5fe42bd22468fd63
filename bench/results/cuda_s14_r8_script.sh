#!/bin/bash
# s14 r8: v3e (r7 with items walked row block slowest, alternating direction per round; persistent CTAs, one per SM: the producer loads the next work item's Q and tiles
# under the current one; O stored from the accumulators): GPU tests, then (if they pass) the
# conformance suite, verified runs, sanitizers; prefill A/B against v3c (r5's build), two
# alternating rounds, v2 and the torch peers in the same call.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s14/bin8.tgz -C /tmp/b && tar xzf .devbin/s14/old_v3c.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 60 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|Expected|Which|relative|lse|non-finite" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; trc=$?; echo "tests rc=$trc $(tail -2 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
if [ $trc = 0 ] && [ $rc = 0 ]; then
timeout 240 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -8
{
for args in "" "--model gemma-2-9b --requests 4 --prompt-len 300 --decode-steps 8" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200" "--model llama-3.1-8b --requests 2 --prompt-len 2000 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 120 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/5 rc=0 ${SECONDS}s"; grep -E "CUDA_FLASH v|verification" $OUT/runs.log | cut -c1-120 | head -12
for tool in memcheck racecheck synccheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.PrefillFp16Head64PageOne:CudaFlash.NonCausalMqaHead256:CudaFlash.WindowSoftcapAlibiSinks' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
fi
for r in 1 2; do
  timeout 90 /tmp/b/attnkit bench --device cuda --suite prefill --variant v3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "v3e r$r rc=$?"; sed 's/"variant":"v3"/"variant":"v3e"/' /tmp/p.jsonl >> $OUT/bench_prefill.jsonl
  timeout 90 /tmp/b/attnkit_v3c bench --device cuda --suite prefill --variant v3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "v3c r$r rc=$?"; sed 's/"variant":"v3"/"variant":"v3c"/' /tmp/p.jsonl >> $OUT/bench_prefill.jsonl
done
timeout 90 /tmp/b/attnkit bench --device cuda --suite prefill --variant v2 --out /tmp/p.jsonl > /dev/null 2>&1; echo "v2 rc=$?"; cat /tmp/p.jsonl >> $OUT/bench_prefill.jsonl
PYTHONUNBUFFERED=1 timeout 200 python3 bench/peers_gpu.py --suite prefill --out /tmp/peers.jsonl > /tmp/peers.log 2>&1; echo "peers rc=$? ${SECONDS}s"; cat /tmp/peers.jsonl >> $OUT/bench_prefill.jsonl
python3 - <<'PY' $OUT/bench_prefill.jsonl
import json,sys,collections
t=collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    name=r.get('variant') if r.get('impl')=='attnkit' else r.get('impl')
    t[(r['head_dim'],r['seq_q'],r['causal'])][name].append(round(r['TFLOPs']))
for k in sorted(t): print(k, dict(t[k]))
PY
