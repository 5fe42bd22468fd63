#!/bin/bash
# s17 r3: B3 = r1's B with the conversion's stage offsets as one base plus immediates; I2 = B3 with
# head 256's raw tiles in two halves through three 8 KB slots (s16's I, now without the producer
# fence). I2 (attnkit) verified: the Hopper tests, every CUDA GPU test, conformance, two fp8 runs,
# racecheck and synccheck on the small fp8 Hopper test; B / B3 / I2 alternating, two rounds of the
# fp8 prefill suite; ncu (full set, SASS source counters) of B3 at head 128 and I2 at head 256,
# 4k keys, non-causal.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s17c/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 100 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Hopper*' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper tests rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|actual" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 150 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > /tmp/tests.log 2>&1; echo "tests rc=$? $(tail -1 /tmp/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" /tmp/tests.log | head -20
timeout 200 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA_FLASH .*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model qwen3-8b --kv-cache-dtype fp8_e5m2 --requests 3 --prompt-len 700 --decode-steps 4"; do
  echo "-- run --device cuda --verify $args"; timeout 100 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/2 rc=0 ${SECONDS}s"
for tool in racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperFp8FormSmall' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
rm -f /tmp/all.jsonl
for round in 1 2; do for bin in attnkit_B attnkit_B3 attnkit; do
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
    b={'attnkit_B':'B','attnkit_B3':'B3'}.get(r['build'],'I2')
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[f"{b}.{r['round']}"]=round(r.get('TFLOPs')) if r['ok'] else 'FAIL'
for k in sorted(t): print(k, t[k])
PY
for cfg in "B3 128" "I2 256"; do set -- $cfg; bin=/tmp/b/attnkit; [ $1 = B3 ] && bin=/tmp/b/attnkit_B3
  timeout 150 ncu --kernel-name-base mangled --kernel-name regex:"ILi${2}E13__nv_bfloat16Lb1E" --launch-skip 55 --launch-count 1 --set full --import-source no -o /tmp/ncu_$1 $bin bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 > /tmp/ncu_$1.log 2>&1; echo "ncu $1 rc=$? ${SECONDS}s"; tail -2 /tmp/ncu_$1.log
  ncu --import /tmp/ncu_$1.ncu-rep --page source --csv --print-source sass > /tmp/src_$1.csv 2>&1; gzip -c /tmp/src_$1.csv > $OUT/ncu_$1_d$2_source.csv.gz
  ncu --import /tmp/ncu_$1.ncu-rep --section WarpStateStats --section SchedulerStats --section SpeedOfLight --section LaunchStats > $OUT/ncu_$1_d$2_summary.txt 2>&1
done
