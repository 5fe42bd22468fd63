#!/bin/bash
# s16 r9: I = H (r8) with head 256's raw fp8 tiles in two halves through the ring's three 8 KB
# slots (two halves in flight while one converts; H copied, then converted each whole tile in its
# one 16 KB slot); heads 64 and 128 compile to H's SASS. I verified: the Hopper test, the CUDA_FLASH
# GPU tests, the conformance suite, three verified runs over fp8 caches, four compute-sanitizer
# tools; A/B (H, I) alternating, two rounds, of the fp8 prefill suite under v3.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s16i/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 90 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|actual" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 100 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*' --gtest_brief=1 > /tmp/tests.log 2>&1; echo "tests rc=$? $(tail -1 /tmp/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" /tmp/tests.log | head -20
timeout 100 /tmp/b/attnkit_test_conformance --gtest_brief=1 --gtest_filter='*CUDA_FLASH*' > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -8
{
for args in "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gemma-2-9b --kv-cache-dtype fp8_e5m2 --requests 2 --prompt-len 1500 --decode-steps 2" "--model llama-3.1-8b --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 2000 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 100 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/3 rc=0 ${SECONDS}s"
for tool in memcheck racecheck synccheck initcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.NonCausalMqaHead256:CudaFlash.Fp8E4m3PerTensor' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
rm -f /tmp/all.jsonl
for round in 1 2; do for bin in attnkit_H attnkit; do
  timeout 60 /tmp/b/$bin bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $bin round $round rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/p.jsonl')]" $bin $round >> /tmp/all.jsonl
done; done
cp /tmp/all.jsonl $OUT/ab_prefill_fp8.jsonl
python3 - $OUT/ab_prefill_fp8.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    b='H' if r['build']=='attnkit_H' else 'I'
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[f"{b}{r['round']}"]=round(r.get('TFLOPs')) if r['ok'] else 'FAIL'
for k in sorted(t): print(k, t[k])
PY
