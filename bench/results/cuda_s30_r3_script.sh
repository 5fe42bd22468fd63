#!/bin/bash
# s30 device run 3 (bin2): the mixed suite (ms = concurrent parts, ms_in_turn the parts in turn,
# ms_parts_below_threshold concurrent parts where the plan keeps one launch); the deepseek-v3
# serving run whose late steps cross the 32 MiB decode threshold (gpu_check.sh's new run);
# memcheck on the part and graph tests; the quick decode suite (one-part batches: unchanged).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s30/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r3.tgz -C $W . ; }
timeout 150 /tmp/z/attnkit bench --device cuda --suite mixed --out $W/mixed.jsonl > /dev/null 2>>$W/err.txt
echo "mixed rc=$? ${SECONDS}s" >> $S
python3 - >> $S <<'PY'
import json
for l in open('/tmp/w/mixed.jsonl'):
    x = json.loads(l)
    if x.get('kind') not in ('mixed', 'mla_mixed'): continue
    alt = 'in_turn' if 'ms_in_turn' in x else 'parts_below_threshold'
    print(x['kind'], x['heads_q'], x['heads_kv'], x['kv_dtype'][:4], x['batch_lens'], x['seq_q'], 'plan', round(x['ms']*1e3,1), alt, round(x.get('ms_'+alt, 0)*1e3,1), 'one', round(x['ms_one_part']*1e3,1), 'two calls', round(x['ms_two_calls']*1e3,1), x['parts'], x['ok'])
PY
save
timeout 200 /tmp/z/attnkit run --device cuda --verify --quiet --model deepseek-v3 --requests 32 --prompt-len 1000 --decode-steps 4 --max-tokens-per-step 512 > $W/run_deepseek.log 2>&1
echo "deepseek run rc=$? $(grep -c 'verification: OK' $W/run_deepseek.log) verified; $(grep 'attention$' $W/run_deepseek.log) ${SECONDS}s" >> $S
save
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 17 --print-limit 20 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash.GraphCaptureTwoParts*:CudaFlash.Mixed*:CudaFlash.MlaMixed*' > $W/memcheck.txt 2>&1
echo "memcheck rc=$? $(tail -1 $W/memcheck.txt) ${SECONDS}s" >> $S
save
timeout 100 /tmp/z/attnkit bench --device cuda --suite decode --quick --out $W/decode_quick.jsonl > /dev/null 2>>$W/err.txt
echo "decode quick rc=$? ${SECONDS}s" >> $S
save
cat $S
