#!/bin/bash
# s18 r3: the final kernels (ragged plans run their own decode-form instantiation; every other
# kernel's SASS is identical to d1f1176's). Every CUDA GPU test, four sanitizers on the two ragged
# tests, ragged decode batches with per-sequence counts against --uniform-splits (pages 16, 64,
# 128; two alternating rounds), the conformance suite and four verified runs.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s18c/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
for tool in memcheck initcheck synccheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Ragged*' > /tmp/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1) ${SECONDS}s"; head -c 6000 /tmp/san_$tool.log > $OUT/san_$tool.log
done
G="1x65536+63x1024,1x32768+15x2048,64x1024+1x32768,2x16384+126x512,1x32768+1x1024"
for round in 1 2; do
  for mode in ragged uniform; do
    extra=""; [ $mode = uniform ] && extra="--uniform-splits"
    timeout 150 /tmp/b/attnkit bench --device cuda --suite decode --decode-grid "$G" $extra --out /tmp/r.jsonl > /dev/null 2>&1; echo "bench $mode round $round rc=$? ${SECONDS}s"
    python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), mode=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $mode $round >> $OUT/ragged_ab.jsonl
  done
done
python3 - $OUT/ragged_ab.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='decode': continue
    k=(r.get('batch_lens'), r['heads_kv'], r['kv_dtype'][:4], r['page'])
    v=f"{r['ms']*1e3:.1f}us {r['GBps']:.0f}GB/s ch{r['split_chunk_keys']} s{r['splits']} probe{r['probe_ms']*1e3:.1f}" if r['ok'] else 'FAIL'
    t.setdefault(k,{}).setdefault(r['mode'],[]).append(v)
for k in t: print(k, t[k])
PY
timeout 200 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model llama-3.1-8b --requests 6 --prompt-len 2000 --decode-steps 4" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  echo "-- run --device cuda --verify $args"; timeout 100 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/4 rc=0 ${SECONDS}s"
