#!/bin/bash
# s30 device run 1 (bin1 = HEAD 2601cf8 + concurrent_parts, default off; throwaway env
# ATTNKIT_PARTS_EXP: bit 0 the decode part issued first, bit 1 the side stream at high priority).
# The part and graph tests (CUDA_MLA graph cases have never run), the mixed suite under each
# variant (ms_concurrent against ms, the parts in turn), then the CPU decode bench on the 16 cores.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s30/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
timeout 150 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash.GraphCapture*:CudaFlash.Mixed*:CudaFlash.MlaMixed*:CudaFlash.BackToBack*' > $W/new_tests.txt 2>&1
echo "part tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/new_tests.txt | head -8 | tr '\n' ' ') ${SECONDS}s" >> $S
save
for v in 0 1 2 3 0 1; do
  ATTNKIT_PARTS_EXP=$v timeout 100 /tmp/z/attnkit bench --device cuda --suite mixed --out $W/mixed_v$v.jsonl.tmp > /dev/null 2>>$W/err.txt
  echo "mixed v$v rc=$? ${SECONDS}s" >> $S
  cat $W/mixed_v$v.jsonl.tmp >> $W/mixed_v$v.jsonl; rm -f $W/mixed_v$v.jsonl.tmp
  save
done
python3 - >> $S <<'PY'
import json, glob
for f in sorted(glob.glob('/tmp/w/mixed_v*.jsonl')):
    print(f)
    for l in open(f):
        x = json.loads(l)
        if 'ms_concurrent' not in x: continue
        print(x['kind'], x['heads_q'], x['heads_kv'], x['kv_dtype'][:4], x['batch_lens'], x['seq_q'], 'plan', round(x['ms']*1e3,1), 'con', round(x['ms_concurrent']*1e3,1), 'clean', round(x['ms_clean_l2']*1e3,1), round(x['ms_concurrent_clean_l2']*1e3,1), 'one', round(x['ms_one_part']*1e3,1), x['ok'])
PY
save
timeout 150 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode.jsonl > $W/cpu_decode.log 2>&1
echo "cpu decode rc=$? ${SECONDS}s" >> $S
save
cat $S
