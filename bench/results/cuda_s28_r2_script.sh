#!/bin/bash
# s28 device run 2: mixed batches as parts (bin2) against one launch (bin1, r1's binary).
# SASS of bin1 against bin2 (only the combine kernels should change: their first token from
# cu_seqlens_q[0]); the CudaFlash tests (new: MixedBatchesRunEachKindAsItsOwnPart), conformance,
# runtime tests, verified runs with mixed steps; the mixed suite (heads 128, 256) and a decode
# A/B (the combine's extra load), bin1 / bin2 alternating, two rounds; run-level A/B of a
# chunked-prefill workload.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z /tmp/z1 && mkdir -p /tmp/z /tmp/z1
tar xJf .devbin/s28/bin2.txz -C /tmp/z && tar xJf .devbin/s28/bin1.txz -C /tmp/z1
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
sed 's/missing\[:20\]/missing/; s/added\[:40\]/added/' bench/results/sass_compare.py > /tmp/sc.py
python3 /tmp/sc.py /tmp/z1/attnkit /tmp/z/attnkit > $W/sass_bin1_vs_bin2.txt 2>&1
{ echo "sass rc=$? $(head -1 $W/sass_bin1_vs_bin2.txt)"
  grep 'missing:' $W/sass_bin1_vs_bin2.txt | sed -E 's/.*(flash_[a-z_]+kernel|mla_[a-z_]+kernel|[a-z_]+_kernel).*/\1/' | sort | uniq -c | tr '\n' ' '; echo; } > $S
/tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -8 | tr '\n' ' ') ${SECONDS}s" >> $S
/tmp/z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | grep -v CPU_ | cut -c1-200 >> $S
/tmp/z/attnkit_test_runtime > $W/runtime.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
{ /tmp/z/attnkit run --device cuda --verify --quiet
  /tmp/z/attnkit run --device cuda --verify --quiet --model qwen3-8b --requests 8 --prompt-len 1000 --decode-steps 8 --max-tokens-per-step 512
  /tmp/z/attnkit run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 6 --prompt-len 700 --decode-steps 6 --max-tokens-per-step 256
  /tmp/z/attnkit run --device cuda --verify --quiet --model gpt-oss-20b --requests 4 --prompt-len 400 --max-tokens-per-step 256; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
for r in 1 2; do
  for v in 1 2; do
    B=/tmp/z/attnkit; [ $v = 1 ] && B=/tmp/z1/attnkit
    timeout 120 $B bench --device cuda --suite mixed --out $W/mixed_d128_bin${v}_r$r.jsonl > /dev/null 2>>$W/err.txt
    timeout 120 $B bench --device cuda --suite mixed --decode-head 256 --out $W/mixed_d256_bin${v}_r$r.jsonl > /dev/null 2>>$W/err.txt
    timeout 200 $B bench --device cuda --suite decode --quick --decode-grid 1x4096,1x32768,16x8192,64x4096 --out $W/dec_bin${v}_r$r.jsonl > /dev/null 2>>$W/err.txt
    echo "bench bin$v round $r rc=$? ${SECONDS}s" >> $S
  done
done
for r in 1 2; do
  for v in 1 2; do
    B=/tmp/z/attnkit; [ $v = 1 ] && B=/tmp/z1/attnkit
    $B run --device cuda --model qwen3-8b --requests 64 --prompt-len 2000 --decode-steps 32 --max-tokens-per-step 2048 > $W/runlevel_bin${v}_r$r.txt 2>&1
    echo "runlevel bin$v round $r rc=$? ${SECONDS}s" >> $S
  done
done
python3 - >> $S <<'PY'
import json, glob
def load(f):
    try: return [json.loads(l) for l in open(f)]
    except Exception as e: return []
for d in ['d128','d256']:
    rows = {}
    for v in (1,2):
        for r in (1,2):
            for x in load(f'/tmp/w/mixed_{d}_bin{v}_r{r}.jsonl'):
                if x.get('kind')!='mixed': continue
                k=(x['heads_kv'],x['kv_dtype'],x['batch_lens'],x['seq_q'])
                rows.setdefault(k,{}).setdefault(v,[]).append(x)
    for k,vv in rows.items():
        a=[x['ms']*1e3 for x in vv.get(1,[])]; b=[x['ms']*1e3 for x in vv.get(2,[])]
        two=[x['ms_two_calls']*1e3 for x in vv.get(2,[])]
        err=max([x['check_rel_err'] for x in vv.get(2,[])]+[0])
        parts=[x.get('parts') for x in vv.get(2,[])]
        print(d, k, 'one-launch', [round(t,1) for t in a], 'parts', [round(t,1) for t in b], 'two calls', [round(t,1) for t in two], 'parts', parts[:1], 'err %.1e'%err)
rows={}
for v in (1,2):
    for r in (1,2):
        for x in load(f'/tmp/w/dec_bin{v}_r{r}.jsonl'):
            if x.get('kind')!='decode': continue
            k=(x['heads_kv'],x['kv_dtype'],x['seq_k'],x['batch'])
            rows.setdefault(k,{}).setdefault(v,[]).append((round(x['ms']*1e3,1),round(x['ms_layer_loop']*1e3,1)))
for k,vv in rows.items(): print('decode', k, 'bin1', vv.get(1), 'bin2', vv.get(2))
PY
grep -h -i "attention\|tokens/s\|verification" $W/runlevel_bin*_r*.txt | head -20 >> $S
cd $W && tar czf $OUT/r2.tgz . 
cat $S
