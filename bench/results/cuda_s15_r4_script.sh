#!/bin/bash
# s15 r4: E = C (r2, r3) + the P V wait pinned after the softmax (gmma_wait_after: ptxas had placed
# C's wait before the softmax's exponentials, so the overlap ran only the max), + CPU planning
# presets (host code). E verified: every CUDA GPU test, the conformance suite, five verified runs,
# four compute-sanitizer tools; then the prefill suite under v3 for C and E alternating, two
# rounds, v2's rows, the torch peers (cuDNN, FA2) in the same call, and ncu of E's head-128 4k
# kernel.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s15/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
cp /tmp/b/attnkit /tmp/b/attnkit_E
SECONDS=0
timeout 60 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/hopper_test.log | head
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > /tmp/tests.log 2>&1; echo "tests rc=$? $(tail -1 /tmp/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" /tmp/tests.log | head -20
timeout 240 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "" "--model gemma-2-9b --requests 4 --prompt-len 300 --decode-steps 8" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200" "--model llama-3.1-8b --requests 2 --prompt-len 2000 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 120 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/5 rc=0 ${SECONDS}s"
for tool in memcheck racecheck synccheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.PrefillFp16Head64PageOne:CudaFlash.NonCausalMqaHead256:CudaFlash.WindowSoftcapAlibiSinks' > /tmp/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1) ${SECONDS}s"
done
cat /tmp/san_*.log > $OUT/sanitizers.log
rm -f /tmp/all.jsonl
for round in 1 2; do for v in C E; do
  timeout 90 /tmp/b/attnkit_$v bench --device cuda --suite prefill --variant v3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $v round $round rc=$? ${SECONDS}s"
  python3 -c "import json; [print(json.dumps(dict(json.loads(l), build='$v', round=$round))) for l in open('/tmp/p.jsonl')]" >> /tmp/all.jsonl
done; done
timeout 90 /tmp/b/attnkit bench --device cuda --suite prefill --variant v2 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench v2 rc=$? ${SECONDS}s"
python3 -c "import json; [print(json.dumps(dict(json.loads(l), build='E'))) for l in open('/tmp/p.jsonl')]" >> /tmp/all.jsonl
PYTHONUNBUFFERED=1 timeout 200 python3 bench/peers_gpu.py --suite prefill --out /tmp/peers.jsonl > /tmp/peers.log 2>&1; echo "peers rc=$? ${SECONDS}s"; cat /tmp/peers.jsonl >> /tmp/all.jsonl
cp /tmp/all.jsonl $OUT/bench_prefill.jsonl
python3 - $OUT/bench_prefill.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    name=(r['build']+'-'+r['variant']) if r.get('impl')=='attnkit' else r.get('impl')
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{}).setdefault(name,[]).append(round(r['TFLOPs']))
for k in sorted(t): print(k, t[k])
PY
timeout 120 ncu --clock-control none --set full --import-source no --kernel-name regex:"flash_hopper" --launch-skip 149 --launch-count 1 -o /tmp/ncu_d128 /tmp/b/attnkit_E bench --device cuda --suite prefill --variant v3 > /tmp/ncu.log 2>&1; echo "ncu rc=$? ${SECONDS}s"
ncu --import /tmp/ncu_d128.ncu-rep --page details --csv > /tmp/d.csv 2>&1; grep -E '"(Duration|Issue Slots Busy|Executed Instructions|Warp Cycles Per Issued Instruction)"' /tmp/d.csv | awk -F'","' '{print $(NF-2)": "$NF}'; grep -i "highest-utilized" /tmp/d.csv | head -1 | cut -c1-100
gzip -c /tmp/d.csv > $OUT/ncu_E_d128_4k_details.csv.gz
