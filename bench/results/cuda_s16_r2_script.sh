#!/bin/bash
# s16 r2: B = r1 + bf16 from fp8 through fp32's high halves (a byte permute instead of
# cvt.rn.bf16x2.f32: the fp8 prefill producers' second conversion per pair); A = r1's attnkit.
# B's GPU tests and conformance; A/B alternating, two rounds, of the fp8 prefill suite under v3
# and v2; ncu of B's fp8 Hopper kernel at head 128, 4k keys, non-causal.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s16b/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 90 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/hopper_test.log | head -20
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > /tmp/tests.log 2>&1; echo "tests rc=$? $(tail -1 /tmp/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" /tmp/tests.log | head -20
timeout 240 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
rm -f /tmp/all.jsonl
for round in 1 2; do for bin in attnkit_A attnkit; do for v in v3 v2; do
  timeout 100 /tmp/b/$bin bench --device cuda --suite prefill --variant $v --prefill-kv fp8_e4m3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $bin $v round $round rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/p.jsonl')]" $bin $round >> /tmp/all.jsonl
done; done; done
cp /tmp/all.jsonl $OUT/ab_prefill_fp8.jsonl
python3 - $OUT/ab_prefill_fp8.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    name=('A' if r['build']=='attnkit_A' else 'B')+'/'+r['variant']+str(r['round'])
    t.setdefault((r.get('head_dim'),r.get('seq_q'),r.get('causal')),{})[name]=round(r.get('TFLOPs'))
for k in sorted(t): print(k, t[k])
PY
timeout 150 ncu --kernel-name regex:flash_hopper --launch-skip 149 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis --section SchedulerStats /tmp/b/attnkit bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 > $OUT/ncu_fp8_d128_4k.txt 2>&1; echo "ncu rc=$? ${SECONDS}s"
grep -E 'flash_hopper|Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Executed Ipc|Stall|Warp Cycles Per Issued|pipe|Pipe' $OUT/ncu_fp8_d128_4k.txt | head -40
