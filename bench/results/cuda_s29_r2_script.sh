#!/bin/bash
# s29 device run 2 (bin2): CUDA_MLA's chunked-prefill steps as two parts; fp8 speculative rows
# with a split count per sequence. The new and changed tests with memcheck; the mixed suite
# (CUDA_FLASH and CUDA_MLA rows, each with its one-part A/B in the row) twice; speculative rows
# over ragged batches, a count per sequence against one (--uniform-splits), alternating, two
# rounds; the deepseek-v3 chunked-prefill run of r1 again.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s29/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
NEW='CudaFlash.MlaMixed*:CudaFlash.Fp8Speculative*:CudaFlash.MixedBatches*:CudaMlaHost*:CudaFlashHost*'
/tmp/z/attnkit_test_backends --gtest_filter="$NEW" > $W/new_tests.txt 2>&1
echo "new tests rc=$? $(grep -E '^\[  PASSED|FAILED|OK \]' $W/new_tests.txt | tr '\n' ' ') ${SECONDS}s" >> $S
save
timeout 120 compute-sanitizer --tool memcheck /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash.MlaMixed*:CudaFlash.Fp8Speculative*' > $W/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $W/memcheck.txt | tail -1) ${SECONDS}s" >> $S
save
for r in 1 2; do
  timeout 150 /tmp/z/attnkit bench --device cuda --suite mixed --out $W/mixed_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "mixed r$r rc=$? ${SECONDS}s" >> $S
  save
done
for r in 1 2; do
  for m in ragged uniform; do
    f=""; [ $m = uniform ] && f=--uniform-splits
    for q in 4 8; do
      timeout 60 /tmp/z/attnkit bench --device cuda --suite decode --quick $f --decode-grid 1x65536+63x1024,1x32768+15x2048 --decode-q $q --out $W/spec_${m}_q${q}_r$r.jsonl > /dev/null 2>>$W/err.txt
      echo "spec $m q$q r$r rc=$? ${SECONDS}s" >> $S
    done
  done
done
save
/tmp/z/attnkit run --device cuda --verify --quiet --model deepseek-v3 --requests 32 --prompt-len 1000 --decode-steps 4 --max-tokens-per-step 512 > $W/run.log 2>&1
echo "deepseek run rc=$? $(grep -c 'verification: OK' $W/run.log) verified; $(grep 'attention$' $W/run.log) ${SECONDS}s" >> $S
save
python3 - >> $S <<'PY'
import json, glob
for f in sorted(glob.glob('/tmp/w/mixed_r*.jsonl')):
    for l in open(f):
        x = json.loads(l)
        if x.get('kind') not in ('mixed', 'mla_mixed'): continue
        print(f[-8:-6], x['kind'], x['heads_q'], x['heads_kv'], x['kv_dtype'], x['batch_lens'], x['seq_q'], 'one', round(x['ms_one_part']*1e3,1), 'parts', round(x['ms']*1e3,1), 'two', round(x['ms_two_calls']*1e3,1), 'x%.2f' % (x['ms_one_part']/x['ms']), x['parts'], x['form'], x['ok'])
for f in sorted(glob.glob('/tmp/w/spec_*.jsonl')):
    for l in open(f):
        x = json.loads(l)
        if x.get('kind') != 'decode' or x['kv_dtype'] == 'bfloat16': continue
        print(f.split('/')[-1][5:-6], x['heads_kv'], x['batch_lens'], x['seq_q'], round(x['ms']*1e3,1), round(x['ms_layer_loop']*1e3,1), x['form'], x['splits'], x['split_chunk_keys'], x['ok'])
PY
save
cat $S
