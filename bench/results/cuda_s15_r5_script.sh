#!/bin/bash
# s15 r5: the session's final build (v3d kernels, SASS identical to r3's C; CPU planning presets):
# every CUDA GPU test, the conformance suite, five verified runs, and the prefill suite under v3.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s15/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 60 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
timeout 240 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "" "--model gemma-2-9b --requests 4 --prompt-len 300 --decode-steps 8" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200" "--model llama-3.1-8b --requests 2 --prompt-len 2000 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 120 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/5 rc=0 ${SECONDS}s"
timeout 90 /tmp/b/attnkit bench --device cuda --suite prefill --variant v3 --out $OUT/bench_prefill_v3.jsonl > /dev/null 2>&1; echo "bench rc=$? ${SECONDS}s"
python3 -c "
import json
for l in open('$OUT/bench_prefill_v3.jsonl'):
    r=json.loads(l)
    if r.get('kind')=='prefill': print(r['head_dim'], r['seq_q'], r['causal'], r['form'], round(r['TFLOPs']), r['ok'])"
