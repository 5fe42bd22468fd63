#!/bin/bash
# s18 r2: r1's test fixed (the replanned capture takes its plan's workspace). The ragged test and
# four sanitizers on it; the full decode suite (uniform grid plus the ragged 1x65536+63x1024
# batch) on this build (B) against HEAD d1f1176's binary (A, uniform grid), alternating, two
# rounds; the conformance suite and four verified runs on B.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s18b/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 100 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Ragged*:CudaFlashHost.*' > $OUT/ragged_test.log 2>&1; echo "ragged test rc=$? ${SECONDS}s"; grep -E "FAILED|Failure|OK \]" $OUT/ragged_test.log | head
for tool in memcheck initcheck synccheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.RaggedDecodeSplitsPerSequence' > /tmp/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1) ${SECONDS}s"; head -c 6000 /tmp/san_$tool.log > $OUT/san_$tool.log
done
for round in 1 2; do
  for bin in A B; do
    timeout 150 /tmp/b/attnkit_$bin bench --device cuda --suite decode --out /tmp/r.jsonl > /dev/null 2>&1; echo "decode $bin round $round rc=$? ${SECONDS}s"
    python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), bin=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $bin $round >> $OUT/decode_ab.jsonl
  done
done
python3 - $OUT/decode_ab.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='decode': continue
    k=(r.get('batch_lens', f"{r['batch']}x{r['seq_k']}"), r['heads_kv'], r['kv_dtype'][:4], r['page'])
    t.setdefault(k,{}).setdefault(r['bin'],[]).append(round(r['ms']*1e3,1) if r['ok'] else 'FAIL')
ratios=[]
for k,v in t.items():
    a=v.get('A'); b=v.get('B')
    if a and b: ratios.append(min(b)/min(a))
    print(k, v, f"B/A {min(b)/min(a):.3f}" if a and b else '')
if ratios: print('B/A min %.3f max %.3f mean %.4f' % (min(ratios), max(ratios), sum(ratios)/len(ratios)))
PY
timeout 200 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -12
{
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model llama-3.1-8b --requests 6 --prompt-len 2000 --decode-steps 4" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  echo "-- run --device cuda --verify $args"; timeout 100 /tmp/b/attnkit_B run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/4 rc=0 ${SECONDS}s"
