#!/bin/bash
# s20 r3: racecheck, synccheck and initcheck on the fp8 decode form at heads 192..256 (B's
# kernels; D's are byte-identical). B against D (D: the fp8 decode plan at heads 129..256 lets a
# CTA alone on its SM run 16 tiles before counting it as two, kLoneCtaTilesPaged), single-sequence
# and few-sequence rows at heads 256 and 192, two alternating rounds at 256.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s20/bin.txz -C /tmp/b && tar xJf .devbin/s20/D.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
S=$OUT/summary.txt
for tool in racecheck synccheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Fp8DecodeFormWideHeads' > /tmp/san.log 2>&1; echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1) ${SECONDS}s" >> $S; head -c 3000 /tmp/san.log > $OUT/san_$tool.log
done
G="1x8192,1x16384,1x32768,1x131072,2x16384,4x8192"
for round in 1 2; do
  for bin in attnkit attnkit_D; do
    timeout 100 /tmp/b/$bin bench --device cuda --suite decode --decode-head 256 --decode-grid "$G" --out /tmp/r.jsonl > /dev/null 2>&1; echo "decode256 $bin round $round rc=$? ${SECONDS}s" >> $S
    python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), bin=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $bin $round >> $OUT/decode256_ab.jsonl
  done
done
for bin in attnkit attnkit_D; do
  timeout 100 /tmp/b/$bin bench --device cuda --suite decode --decode-head 192 --decode-grid "$G" --out /tmp/r.jsonl > /dev/null 2>&1; echo "decode192 $bin rc=$? ${SECONDS}s" >> $S
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), bin=sys.argv[1], round=1))) for l in open('/tmp/r.jsonl')]" $bin >> $OUT/decode192_ab.jsonl
done
cat $S
python3 - $OUT/decode256_ab.jsonl $OUT/decode192_ab.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    print('==', f.split('/')[-1]); t={}
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')!='decode' or r['kv_dtype'][:3]!='fp8': continue
        k=(r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}", r['heads_kv'], r['page'])
        t.setdefault(k,[]).append(f"{r['bin'][-1:]}{r['round']}:{r['ms']*1e3:.1f}/{r['ms_layer_loop']*1e3:.1f} s{r['splits']}" if r['ok'] else 'FAIL')
    for k,v in t.items(): print(k, ' '.join(v))
PY
