#!/bin/bash
# s18 r5: session 17's unmeasured TMA raw-copy diff (cuda_s17_r8_tma_raw_copies_unmeasured.diff,
# merged onto d1f1176: T) against d1f1176 (A). T's Hopper tests first (r7's build failed 5 at
# head 256 and hung a gemma-2-9b run), a gemma-2-9b fp8 run, then the v3 fp8 prefill suite
# alternating A / T, two rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s18e/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 120 /tmp/b/attnkit_test_backends_T --gtest_filter='CudaFlash.Hopper*:CudaFlash.Fp8*' > $OUT/T_tests.log 2>&1; rc=$?; echo "T hopper tests rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure|OK \]" $OUT/T_tests.log | head -12
[ $rc = 124 ] && exit 1
timeout 60 /tmp/b/attnkit_T run --device cuda --verify --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 > $OUT/T_run.log 2>&1; rc=$?; echo "T gemma fp8 run rc=$rc ${SECONDS}s"; tail -2 $OUT/T_run.log
[ $rc != 0 ] && exit 1
for round in 1 2; do for bin in A T; do
  timeout 100 /tmp/b/attnkit_$bin bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $bin round $round rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), bin=sys.argv[1], round=int(sys.argv[2])))) for l in open('/tmp/p.jsonl')]" $bin $round >> $OUT/fp8_prefill_ab.jsonl
done; done
python3 - $OUT/fp8_prefill_ab.jsonl <<'PY'
import json,sys
t={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')!='prefill': continue
    t.setdefault((r['head_dim'],r['seq_q'],r['causal'],r['form']),{}).setdefault(r['bin'],[]).append(round(r['TFLOPs']) if r['ok'] else 'FAIL')
for k,v in t.items():
    a=v.get('A');b=v.get('T')
    print(k, v, f"T/A {max(b)/max(a):.3f}" if a and b and 'FAIL' not in a+b else '')
PY
