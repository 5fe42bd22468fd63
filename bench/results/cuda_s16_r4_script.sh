#!/bin/bash
# s16 r4: D = C (r3) + over fp8 caches the Hopper form's MMAs run on fp16 operands (one conversion
# per fp8 pair in the producer; a bf16 model's Q rows converted in place by each consumer warp,
# scaled by a power of two folded into the logits' scale). D verified: the Hopper test (huge and
# tiny Q added), every CUDA GPU test, the conformance suite, six verified runs, four
# compute-sanitizer tools; A/B (C, D) alternating, two rounds, of the fp8 prefill suite under v3;
# D's bf16 prefill under v3 and fp8 under v2 for the table; ncu summary of D's d128 4k kernel.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s16d/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 90 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|Which is|error" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
timeout 240 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200" "--model llama-3.1-8b --requests 2 --prompt-len 2000 --decode-steps 4" "--model llama-3.1-8b --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 2000 --decode-steps 4" "--model qwen3-8b --kv-cache-dtype fp8_e5m2 --requests 3 --prompt-len 700 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 120 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/6 rc=0 ${SECONDS}s"; grep -E "^-- |backend|verified" $OUT/runs.log | cut -c1-150 | tail -8
for tool in memcheck racecheck synccheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.PrefillFp16Head64PageOne:CudaFlash.NonCausalMqaHead256:CudaFlash.WindowSoftcapAlibiSinks:CudaFlash.Fp8E4m3PerTensor' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
rm -f /tmp/all.jsonl
for round in 1 2; do for bin in attnkit_C attnkit; do
  timeout 100 /tmp/b/$bin bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $bin round $round rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/p.jsonl')]" $bin $round >> /tmp/all.jsonl
done; done
for cfg in "v3 bfloat16" "v2 fp8_e4m3"; do set -- $cfg
  timeout 100 /tmp/b/attnkit bench --device cuda --suite prefill --variant $1 --prefill-kv $2 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $cfg rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build='attnkit', round=1))) for l in open('/tmp/p.jsonl')]" >> /tmp/all.jsonl
done
cp /tmp/all.jsonl $OUT/bench_prefill.jsonl
python3 - $OUT/bench_prefill.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    b='C' if r['build']=='attnkit_C' else 'D'
    name=f"{b}{r['round']}" if r['kv_dtype']=='fp8_e4m3' and r['variant']=='v3' else f"{b}-{r['variant']}-{r['kv_dtype'][:4]}"
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[name]=(round(r.get('TFLOPs')), r['form'][:2]) if r['ok'] else 'FAIL'
for k in sorted(t): print(k, t[k])
PY
timeout 120 ncu --kernel-name regex:flash_hopper --launch-skip 149 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section SchedulerStats /tmp/b/attnkit bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 > $OUT/ncu_fp8d_d128_4k.txt 2>&1; echo "ncu rc=$? ${SECONDS}s"
grep -E 'flash_hopper|Duration|Issue Slots Busy|Executed Instructions  |Warp Cycles Per Issued' $OUT/ncu_fp8d_d128_4k.txt | head
