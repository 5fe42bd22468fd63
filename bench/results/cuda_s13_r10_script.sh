#!/bin/bash
# s13 r10: the final code (the plan's form reported in bench rows): the CUDA GPU tests, then the
# quick MLA suite in the auto and wide forms.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s13/bin10.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.*:CudaMlaHost.*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -2 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head
for f in auto wide; do /tmp/b/attnkit bench --device cuda --suite mla --quick --mla-form $f >> $OUT/bench_mla_quick.jsonl 2>/dev/null; echo "mla $f rc=$?"; done
python3 -c "
import json
for l in open('$OUT/bench_mla_quick.jsonl'):
    r=json.loads(l)
    if r.get('kind')=='mla_decode': print(r['mla_form'], r['form'], r['heads_q'], r['batch'], r['seq_k'], r['kv_dtype'], round(r['ms']*1e3), 'us', r['ok'])
"
