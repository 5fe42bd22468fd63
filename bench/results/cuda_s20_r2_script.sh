#!/bin/bash
# s20 r2: B (r1's binary: fp8 decode form at heads 129..256, two 64-key stages) against C (three
# stages at heads over 128, still two CTAs per SM). Every CUDA GPU test on B; C's decode tests and
# memcheck; head-256 decode grid B, C, B, C; forced split counts at 1x32k (B); head-192 quick grid.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s20/bin.txz -C /tmp/b && tar xJf .devbin/s20/C.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
S=$OUT/summary.txt
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > /tmp/tests.log 2>&1; echo "tests B rc=$? $(tail -1 /tmp/tests.log) ${SECONDS}s" >> $S; grep -E "FAILED|Failure" /tmp/tests.log | head -20 >> $S; grep -E "tests from.*ran|PASSED" /tmp/tests.log >> $S
F='CudaFlash.Fp8DecodeFormWideHeads:CudaFlash.EveryManifestHeadPair:CudaFlash.RaggedDecodeEveryFeature'
timeout 100 /tmp/b/attnkit_test_backends_C --gtest_filter="$F" --gtest_brief=1 > /tmp/tc.log 2>&1; echo "tests C rc=$? $(tail -1 /tmp/tc.log) ${SECONDS}s" >> $S; grep -E "FAILED|Failure" /tmp/tc.log | head >> $S
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 /tmp/b/attnkit_test_backends_C --gtest_filter='CudaFlash.Fp8DecodeFormWideHeads' > /tmp/san.log 2>&1; echo "memcheck C rc=$? $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1) ${SECONDS}s" >> $S
for round in 1 2; do
  for bin in attnkit attnkit_C; do
    timeout 100 /tmp/b/$bin bench --device cuda --suite decode --decode-head 256 --out /tmp/r.jsonl > /dev/null 2>&1; echo "decode256 $bin round $round rc=$? ${SECONDS}s" >> $S
    python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), bin=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $bin $round >> $OUT/decode256_ab.jsonl
  done
done
for n in 16 32 48 96 128; do
  timeout 40 /tmp/b/attnkit bench --device cuda --suite decode --quick --decode-head 256 --decode-grid 1x32768 --splits $n --out /tmp/r.jsonl > /dev/null 2>&1; echo "splits $n rc=$? ${SECONDS}s" >> $S
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), forced=int(sys.argv[1])))) for l in open('/tmp/r.jsonl')]" $n >> $OUT/split_sweep.jsonl
done
for bin in attnkit attnkit_C; do
  timeout 60 /tmp/b/$bin bench --device cuda --suite decode --quick --decode-head 192 --out /tmp/r.jsonl > /dev/null 2>&1; echo "decode192 $bin rc=$? ${SECONDS}s" >> $S
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), bin=sys.argv[1]))) for l in open('/tmp/r.jsonl')]" $bin >> $OUT/decode192_ab.jsonl
done
cat $S
python3 - $OUT/decode256_ab.jsonl $OUT/split_sweep.jsonl $OUT/decode192_ab.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    print('==', f.split('/')[-1]); t={}
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')!='decode' or r['kv_dtype'][:3]!='fp8': continue
        k=(r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}", r['heads_kv'], r['page'], r.get('forced',''))
        t.setdefault(k,[]).append(f"{r.get('bin','')[-1:]}{r.get('round','')}:{r['ms']*1e3:.1f}/{r['ms_layer_loop']*1e3:.1f} s{r['splits']}" if r['ok'] else 'FAIL')
    for k,v in t.items(): print(k, ' '.join(v))
PY
