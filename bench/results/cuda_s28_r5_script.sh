#!/bin/bash
# s28 device run 5 (final build, bin5): fp8 caches at heads up to 128 take the decode form for
# speculative decodes of 17..32 packed rows (two 16-row blocks). CudaFlash tests (new:
# Fp8SpeculativeDecodeTakesTheDecodeForm), conformance, runtime tests, verified runs, the
# speculative decode rows once (r4 has the A/B), memcheck on the new test last.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s28/bin5.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r5.tgz -C $W . ; }
/tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -8 | tr '\n' ' ') ${SECONDS}s" >> $S
save
/tmp/z/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | cut -c1-200 >> $S
/tmp/z/attnkit_test_runtime > $W/runtime.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
{ /tmp/z/attnkit run --device cuda --verify --quiet
  /tmp/z/attnkit run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 6 --prompt-len 700 --decode-steps 6 --max-tokens-per-step 256
  /tmp/z/attnkit run --device cuda --verify --quiet --model qwen3-8b --requests 8 --prompt-len 1000 --decode-steps 8 --max-tokens-per-step 512; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
save
for q in 4 8; do
  timeout 60 /tmp/z/attnkit bench --device cuda --suite decode --quick --decode-grid 1x32768,16x8192,64x4096 --decode-q $q --out $W/spec_q$q.jsonl > /dev/null 2>>$W/err.txt
  echo "spec q$q rc=$? ${SECONDS}s" >> $S
done
python3 - >> $S <<'PY'
import json
for q in (4, 8):
    for l in open(f'/tmp/w/spec_q{q}.jsonl'):
        x = json.loads(l)
        if x.get('kind') != 'decode': continue
        print(x['heads_kv'], x['kv_dtype'], x['batch'], x['seq_k'], x['seq_q'], round(x['ms']*1e3,1), round(x['ms_layer_loop']*1e3,1), x['form'], x['splits'], x['ok'])
PY
save
timeout 60 compute-sanitizer --tool memcheck /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash.Fp8Speculative*' > $W/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $W/memcheck.txt | tail -1) ${SECONDS}s" >> $S
save
cat $S
