#!/bin/bash
# s29 device run 3 (bin3, the final build): decode runs under 32 MiB stay in the one launch
# (part_min_decode_bytes). The mixed suite once (its last rows: 2 decodes beside a 512-token
# chunk, where ms_two_calls is what parts would cost); the deepseek-v3 run of r1 (one part) and
# r2 (parts) again; the CudaFlash and CudaMla suites, conformance, runtime tests, the default run.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s29/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r3.tgz -C $W . ; }
timeout 120 /tmp/z/attnkit bench --device cuda --suite mixed --out $W/mixed.jsonl > /dev/null 2>>$W/err.txt
echo "mixed rc=$? ${SECONDS}s" >> $S
python3 - >> $S <<'PY'
import json
for l in open('/tmp/w/mixed.jsonl'):
    x = json.loads(l)
    if x.get('kind') not in ('mixed', 'mla_mixed'): continue
    print(x['kind'], x['heads_q'], x['heads_kv'], x['kv_dtype'], x['batch_lens'], x['seq_q'], 'one', round(x['ms_one_part']*1e3,1), 'plan', round(x['ms']*1e3,1), 'two', round(x['ms_two_calls']*1e3,1), x['parts'], x['ok'])
PY
save
/tmp/z/attnkit run --device cuda --verify --quiet --model deepseek-v3 --requests 32 --prompt-len 1000 --decode-steps 4 --max-tokens-per-step 512 > $W/run_deepseek.log 2>&1
echo "deepseek run rc=$? $(grep -c 'verification: OK' $W/run_deepseek.log) verified; $(grep 'attention$' $W/run_deepseek.log) ${SECONDS}s" >> $S
save
timeout 330 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -8 | tr '\n' ' ') ${SECONDS}s" >> $S
save
timeout 60 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | cut -c1-200 >> $S
timeout 30 /tmp/z/attnkit_test_runtime > $W/runtime.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
save
timeout 30 /tmp/z/attnkit run --device cuda --verify --quiet > $W/run_default.log 2>&1
echo "default run rc=$? $(grep -c 'verification: OK' $W/run_default.log) verified ${SECONDS}s" >> $S
save
cat $S
