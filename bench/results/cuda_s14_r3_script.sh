#!/bin/bash
# s14 r3: v3b with setmaxnreg 96/200 (r2 deadlocked: 96/208 asked for more than the launch allocation): its GPU test, every CUDA_FLASH GPU test
# (each case under v2 and v3), then the prefill suite under v2 and v3.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s14/bin3.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 60 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "OK|FAILED|Failure|error|Expected|Which|relative|lse|non-finite" $OUT/hopper_test.log | head -40
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -3 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
for v in v2 v3; do timeout 90 /tmp/b/attnkit bench --device cuda --suite prefill --variant $v --out /tmp/p_$v.jsonl > /dev/null 2>&1; echo "bench $v rc=$? ${SECONDS}s"; cat /tmp/p_$v.jsonl >> $OUT/bench_prefill.jsonl; done
python3 - <<'PY' $OUT/bench_prefill.jsonl
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    print(r['variant'], r['form'], 'd%d'%r['head_dim'], r['batch'],'x',r['heads_q'], 'S',r['seq_q'], 'causal' if r['causal'] else 'full', f"{r['TFLOPs']:.0f} TF err {r['check_rel_err']:.1e} ok {r['ok']}")
PY
