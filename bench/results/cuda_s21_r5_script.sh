#!/bin/bash
# s21 r5: kSkewedGain 0.65 (new) against 0.5 (old, r4's binary): the CUDA GPU tests, the conformance
# suite, then the skewed grid at head 256 under v3 (Hopper form) and v2 (prefill form), bf16 and
# fp8 rows, two alternating rounds, write protocol, quick pages.
cd "$(dirname "$0")" && mkdir -p x && tar xJf bin.txz -C x && export LD_LIBRARY_PATH=$PWD/x/lib
S=$OUT/summary.txt; SECONDS=0
timeout 240 ./x/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "gpu tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s" > $S
grep -E "FAILED|Failure" $OUT/tests.log | head -5 >> $S
timeout 150 ./x/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s $(grep -E 'CUDA_FLASH [0-9]+ cells' $OUT/conformance.log | head -1 | cut -c1-100)" >> $S
G="1x65536+63x1024,1x32768+15x2048,64x1024+1x32768,2x16384+126x512,1x32768+1x1024,16x8192"
for round in 1 2; do for variant in auto v2; do for b in old new; do
  bin=./x/attnkit; [ $b = old ] && bin=./x/attnkit_old
  rm -f /tmp/r.jsonl
  timeout 120 $bin bench --device cuda --suite decode --quick --decode-head 256 --variant $variant --decode-grid "$G" --out /tmp/r.jsonl > /dev/null 2>&1; echo "bench $variant $b round $round rc=$? ${SECONDS}s" >> $S
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), bin=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/r.jsonl')]" $b $round >> $OUT/skewed_gain_ab.jsonl
done; done; done
python3 - $OUT/skewed_gain_ab.jsonl >> $S <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='decode': continue
    k=(r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}", r['heads_kv'], r['kv_dtype'][:4], r['form'])
    t.setdefault(k,{}).setdefault(r['bin'],[]).append(f"{r['ms']*1e3:.1f}(s{r['splits']})" if r['ok'] else 'FAIL')
for k in t: print(k, 'old', ' '.join(t[k].get('old',[])), '| new', ' '.join(t[k].get('new',[])))
PY
cat $S
