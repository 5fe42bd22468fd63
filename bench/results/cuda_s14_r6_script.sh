#!/bin/bash
# s14 r6: the conformance suite with CUDA_FLASH under its default generation (v3 on SM90) and
# CUDA_FLASH_v2 (the same cells on v2's forms); the quick decode suite under v2 and v3 (v3's
# decode steps run v2's decode form).
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s14/bin6.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 240 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure|tests ran|PASSED' $OUT/conformance.log | cut -c1-220 | head -14
for v in v2 v3; do timeout 90 /tmp/b/attnkit bench --device cuda --suite decode --quick --variant $v --out /tmp/d_$v.jsonl > /dev/null 2>&1; echo "decode $v rc=$? ${SECONDS}s"; cat /tmp/d_$v.jsonl >> $OUT/bench_decode_quick.jsonl; done
python3 - <<'PY' $OUT/bench_decode_quick.jsonl
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='decode': continue
    print(r['variant'], r['form'], r['batch'], r['seq_k'], f"{r['heads_q']}/{r['heads_kv']}", r['page'], r['kv_dtype'], f"{r['ms']*1e3:.1f}us {r['GBps']:.0f}GB/s ok {r['ok']}")
PY
