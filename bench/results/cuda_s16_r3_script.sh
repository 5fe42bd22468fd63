#!/bin/bash
# s16 r3: C = B (r2) + the fp8 producer's conversion loads every chunk before storing any, one
# loop per code format. C's GPU tests; A/B (B, C) alternating, two rounds, of the fp8 prefill
# suite under v3; ncu of C's fp8 Hopper kernel at head 128, 4k keys, non-causal, with SASS-level
# stall samples (source page as CSV).
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s16c/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 90 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > /tmp/tests.log 2>&1; echo "tests rc=$? $(tail -1 /tmp/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" /tmp/tests.log | head -20
rm -f /tmp/all.jsonl
for round in 1 2; do for bin in attnkit_B attnkit; do
  timeout 100 /tmp/b/$bin bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $bin round $round rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/p.jsonl')]" $bin $round >> /tmp/all.jsonl
done; done
cp /tmp/all.jsonl $OUT/ab_prefill_fp8.jsonl
python3 - $OUT/ab_prefill_fp8.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill' or r['form']!='v3-hopper': continue
    name=('B' if r['build']=='attnkit_B' else 'C')+str(r['round'])
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[name]=round(r.get('TFLOPs'))
for k in sorted(t): print(k, t[k])
PY
timeout 200 ncu --kernel-name regex:flash_hopper --launch-skip 149 --launch-count 1 --set full --import-source no -o /tmp/fp8c /tmp/b/attnkit bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 > /tmp/ncu.log 2>&1; echo "ncu rc=$? ${SECONDS}s"; tail -2 /tmp/ncu.log
ncu --import /tmp/fp8c.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>&1; echo "source rc=$? $(wc -l < /tmp/src.csv) lines"
ncu --import /tmp/fp8c.ncu-rep --section WarpStateStats --section SchedulerStats --section SpeedOfLight > $OUT/ncu_fp8c_summary.txt 2>&1
gzip -c /tmp/src.csv > $OUT/ncu_fp8c_source.csv.gz
head -2 /tmp/src.csv | cut -c1-600
