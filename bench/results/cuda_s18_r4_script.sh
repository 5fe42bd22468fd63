#!/bin/bash
# s18 r4: the session's final build (kRaggedGain 0.5; the kernels are r3's). Every CUDA GPU test,
# memcheck / racecheck / initcheck on the two ragged tests, then the full default decode suite
# (its last batch the ragged 1x65536+63x1024) and the ragged grid of r3 (--quick: page 16) once.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s18d/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
for tool in memcheck racecheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Ragged*' > /tmp/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1) ${SECONDS}s"; head -c 6000 /tmp/san_$tool.log > $OUT/san_$tool.log
done
timeout 150 /tmp/b/attnkit bench --device cuda --suite decode --out $OUT/decode.jsonl > /dev/null 2>&1; echo "decode suite rc=$? ${SECONDS}s"
timeout 100 /tmp/b/attnkit bench --device cuda --suite decode --quick --decode-grid "1x65536+63x1024,1x32768+15x2048,64x1024+1x32768,2x16384+126x512,1x32768+1x1024" --out $OUT/ragged.jsonl > /dev/null 2>&1; echo "ragged grid rc=$? ${SECONDS}s"
python3 - $OUT/decode.jsonl $OUT/ragged.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')!='decode': continue
        print(r.get('batch_lens', f"{r['batch']}x{r['seq_k']}"), r['heads_kv'], r['kv_dtype'][:4], r['page'], f"{r['ms']*1e3:.1f}us {r['GBps']:.0f} ch{r['split_chunk_keys']} s{r['splits']} ok={r['ok']}")
PY
