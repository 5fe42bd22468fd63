#!/bin/bash
# s19 r6: forms without per-sequence counts take a uniform count from the ragged model on skewed
# batches (tiles.hpp skewed_uniform_splits). Every CUDA GPU test, memcheck on the ragged tests,
# the conformance suite, then at head 256 the ragged grid against --uniform-splits (v3, the
# device's default, and v2), two alternating rounds; verified runs (gemma-2-9b over fp8, default).
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s19d/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.RaggedDecodeEveryFeature' > /tmp/san.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1) ${SECONDS}s"; head -c 4000 /tmp/san.log > $OUT/san_memcheck.log
timeout 150 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -8
G="1x65536+63x1024,1x32768+15x2048,64x1024+1x32768,2x16384+126x512,1x32768+1x1024,16x8192"
for round in 1 2; do
  for variant in auto v2; do
    for mode in skewed uniform; do
      extra=""; [ $mode = uniform ] && extra="--uniform-splits"
      timeout 100 /tmp/b/attnkit bench --device cuda --suite decode --quick --decode-head 256 --variant $variant --decode-grid "$G" $extra --out /tmp/r.jsonl > /dev/null 2>&1; echo "bench $variant $mode round $round rc=$? ${SECONDS}s"
      python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), mode=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $mode $round >> $OUT/head256_ab.jsonl
    done
  done
done
python3 - $OUT/head256_ab.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='decode': continue
    k=(r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}", r['heads_kv'], r['kv_dtype'][:4], r['variant'], r['form'])
    v=f"{r['ms']*1e3:.1f}us s{r['splits']} loop{r['ms_layer_loop']*1e3:.1f} probe{r['probe_ms']*1e3:.1f}" if r['ok'] else 'FAIL'
    t.setdefault(k,{}).setdefault(r['mode'],[]).append(v)
for k in t: print(k, t[k])
PY
{
for args in "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" ""; do
  echo "-- run --device cuda --verify $args"; timeout 100 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/2 rc=0 ${SECONDS}s"
