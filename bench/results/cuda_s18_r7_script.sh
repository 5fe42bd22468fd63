#!/bin/bash
# s18 r7: the review's build (the plan and the kernels count a sequence's splits with the same
# tiles.hpp functions; the ragged kernels' code changed, every uniform kernel's did not). The
# ragged tests and the ragged grids once (page 16) for decode and MLA.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s18g/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 90 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.*Ragged*:CudaFlashHost.*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head
G="1x65536+63x1024,1x32768+15x2048,64x1024+1x32768,2x16384+126x512,1x32768+1x1024"
timeout 40 /tmp/b/attnkit bench --device cuda --suite decode --quick --decode-grid "$G" --out $OUT/ragged.jsonl > /dev/null 2>&1; echo "decode rc=$? ${SECONDS}s"
timeout 40 /tmp/b/attnkit bench --device cuda --suite mla --decode-grid "1x65536+63x1024,64x1024+1x32768" --out $OUT/mla_ragged.jsonl > /dev/null 2>&1; echo "mla rc=$? ${SECONDS}s"
python3 - $OUT/ragged.jsonl $OUT/mla_ragged.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        if r.get('kind') not in ('decode','mla_decode'): continue
        print(r.get('batch_lens'), r['heads_q'], r['heads_kv'], r['kv_dtype'][:4], r['page'], f"{r['ms']*1e3:.1f}us ch{r['split_chunk_keys']} s{r['splits']} ok={r['ok']}")
PY
