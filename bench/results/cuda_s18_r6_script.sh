#!/bin/bash
# s18 r6: ragged plans for CUDA_MLA's Hopper form too (its own instantiation; every other kernel's
# SASS as before). Every CUDA GPU test (new: MlaRaggedDecode), memcheck / racecheck on it, MLA
# ragged batches with per-sequence counts against --uniform-splits (page 64, bf16 and fp8, 128
# and 16 heads; two alternating rounds), a verified deepseek-v3 run.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s18f/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 150 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure|Expected|actual|ragged" $OUT/tests.log | head -20
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.MlaRaggedDecode' > /tmp/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1) ${SECONDS}s"; head -c 6000 /tmp/san_$tool.log > $OUT/san_$tool.log
done
G="1x65536+63x1024,1x32768+15x2048,64x1024+1x32768,2x16384+126x512"
for round in 1 2; do for mode in ragged uniform; do
  extra=""; [ $mode = uniform ] && extra="--uniform-splits"
  timeout 100 /tmp/b/attnkit bench --device cuda --suite mla --decode-grid "$G" $extra --out /tmp/r.jsonl > /dev/null 2>&1; echo "mla bench $mode round $round rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), mode=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $mode $round >> $OUT/mla_ragged_ab.jsonl
done; done
python3 - $OUT/mla_ragged_ab.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='mla_decode': continue
    k=(r.get('batch_lens'), r['heads_q'], r['kv_dtype'][:4], r['form'])
    v=f"{r['ms']*1e3:.1f}us {r['GBps']:.0f}GB/s ch{r['split_chunk_keys']} s{r['splits']} probe{r['probe_ms']*1e3:.1f}" if r['ok'] else 'FAIL'
    t.setdefault(k,{}).setdefault(r['mode'],[]).append(v)
for k in t: print(k, t[k])
PY
timeout 120 /tmp/b/attnkit run --device cuda --verify --model deepseek-v3 --requests 4 --prompt-len 300 --decode-steps 4 > $OUT/run_deepseek.log 2>&1; echo "deepseek-v3 run rc=$? ${SECONDS}s"; tail -3 $OUT/run_deepseek.log
