#!/bin/bash
# s18 r1: split counts per sequence for ragged decode batches (new). The CUDA GPU tests (with the
# new RaggedDecodeSplitsPerSequence), memcheck / initcheck / synccheck on it, then ragged decode
# batches with the per-sequence plan against --uniform-splits (the plan before this change), two
# alternating rounds, page 16 (--quick), bf16 and fp8, GQA 32/8 and 32/4.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s18a/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
for tool in memcheck initcheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.RaggedDecodeSplitsPerSequence:CudaFlash.GraphCaptureDecodeSplits' > /tmp/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY' /tmp/san_$tool.log | tail -1) ${SECONDS}s"; tail -c 8000 /tmp/san_$tool.log > $OUT/san_$tool.log
done
G="1x65536+63x1024,1x32768+15x2048,64x1024+1x32768,2x16384+126x512,1x32768+1x1024"
for round in 1 2; do
  for mode in ragged uniform; do
    extra=""; [ $mode = uniform ] && extra="--uniform-splits"
    timeout 120 /tmp/b/attnkit bench --device cuda --suite decode --quick --decode-grid "$G" $extra --out /tmp/r.jsonl > /dev/null 2>&1; echo "bench $mode round $round rc=$? ${SECONDS}s"
    python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), mode=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $mode $round >> $OUT/ragged_ab.jsonl
  done
done
python3 - $OUT/ragged_ab.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='decode': continue
    k=(r['batch_lens'] if 'batch_lens' in r else f"{r['batch']}x{r['seq_k']}", r['heads_kv'], r['kv_dtype'][:4])
    v=f"{r['ms']*1e3:.0f}us/{r['GBps']:.0f} ch{r['split_chunk_keys']} s{r['splits']}" if r['ok'] else 'FAIL'
    t.setdefault(k,{}).setdefault(r['mode'],[]).append(v)
for k in t: print(k, t[k])
PY
