#!/bin/bash
# s20 r6: the final build (the fp8 decode form at head 256 takes kLoneCtaTilesPaged's count over
# pages of whole tiles, fp8_decode_paged_count): the split-count and fp8-form tests, then its
# head-256 rows at the shapes whose counts that rule changes (one round; r3 measured the same
# counts against the rule's absence, two rounds).
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s20/final.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
S=$OUT/summary.txt
F='CudaFlash.DecodeSplitsSettledByPageSize:CudaFlash.Fp8DecodeFormWideHeads:CudaFlash.GraphCaptureDecodeSplits:CudaFlash.HeuristicSplitsLongDecode'
timeout 60 /tmp/b/attnkit_test_backends --gtest_filter="$F" > /tmp/t.log 2>&1; echo "tests rc=$? ${SECONDS}s" >> $S; grep -E "^\[ *(OK|FAILED|PASSED) |Failure|Expected|Which|splits" /tmp/t.log | head -30 >> $S
timeout 90 /tmp/b/attnkit bench --device cuda --suite decode --decode-head 256 --decode-grid "1x32768,2x16384,4x8192,1x16384" --out $OUT/decode256.jsonl > /dev/null 2>&1; echo "bench rc=$? ${SECONDS}s" >> $S
cat $S
python3 - $OUT/decode256.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='decode' or r['kv_dtype'][:3]!='fp8': continue
    print(r['batch'],'x',r['seq_k'],r['heads_kv'],r['page'],r['form'],'s',r['splits'],f"{r['ms']*1e3:.1f}/{r['ms_layer_loop']*1e3:.1f}",r['ok'])
PY
