#!/bin/bash
# s19 r7: ragged plans number the split sequences' items first (ragged_item), so a long sequence
# late in the batch starts in the first wave. The ragged tests and two sanitizers on the new build,
# then the ragged grid (long sequences first and last) for CUDA_FLASH (head 128, page 16) and
# CUDA_MLA (128 and 16 heads), new (B) against 66061f2 (A), two alternating rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/a /tmp/b && tar xJf .devbin/s19d/bin.txz -C /tmp/a && tar xJf .devbin/s19e/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 150 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Ragged*:CudaMla*Ragged*:CudaFlash.Graph*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.RaggedDecodeSplitsPerSequence' > /tmp/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1) ${SECONDS}s"; head -c 4000 /tmp/san_$tool.log > $OUT/san_$tool.log
done
G="1x65536+63x1024,63x1024+1x65536,64x1024+1x32768,2x16384+126x512,126x512+2x16384"
for round in 1 2; do
  for b in a b; do
    timeout 100 /tmp/$b/attnkit bench --device cuda --suite decode --quick --decode-grid "$G" --out /tmp/r.jsonl > /dev/null 2>&1; echo "decode $b round $round rc=$? ${SECONDS}s"
    python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $b $round >> $OUT/order_ab.jsonl
    timeout 100 /tmp/$b/attnkit bench --device cuda --suite mla --quick --decode-grid "$G" --out /tmp/r.jsonl > /dev/null 2>&1; echo "mla $b round $round rc=$? ${SECONDS}s"
    python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $b $round >> $OUT/order_ab.jsonl
  done
done
python3 - $OUT/order_ab.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind') not in ('decode','mla_decode'): continue
    k=(r['kind'][:3], r.get('batch_lens'), r['heads_q'], r['heads_kv'], r['kv_dtype'][:4])
    v=f"{r['ms']*1e3:.1f}/{r['ms_layer_loop']*1e3:.1f}" if r['ok'] else 'FAIL'
    t.setdefault(k,{}).setdefault(r['build'],[]).append(v)
for k in t: print(k, 'A', t[k].get('a'), 'B', t[k].get('b'))
PY
