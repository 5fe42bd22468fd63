#!/bin/bash
# s14 r1: CUDA_FLASH v3's Hopper prefill form, first run: its GPU test, every CUDA_FLASH GPU test
# (each case under v2 and v3), then the prefill suite under v2 and v3.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s14/bin1.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 120 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; echo "hopper test rc=$? ${SECONDS}s"; grep -E "OK|FAILED|Failure|error|Expected|Which|relative|lse|non-finite" $OUT/hopper_test.log | head -40
timeout 300 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -3 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
for v in v2 v3; do timeout 200 /tmp/b/attnkit bench --device cuda --suite prefill --variant $v --out /tmp/p_$v.jsonl > /dev/null 2>&1; echo "bench $v rc=$? ${SECONDS}s"; cat /tmp/p_$v.jsonl >> $OUT/bench_prefill.jsonl; done
python3 - <<'PY' $OUT/bench_prefill.jsonl
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    print(r['variant'], r['form'], 'd%d'%r['head_dim'], r['batch'],'x',r['heads_q'], 'S',r['seq_q'], 'causal' if r['causal'] else 'full', f"{r['TFLOPs']:.0f} TF err {r['check_rel_err']:.1e} ok {r['ok']}")
PY
