#!/bin/bash
# s20 r1: fp8 caches take the decode form at heads 129..256 (64-key tiles, Q fragments re-read
# from shared memory). Every CUDA GPU test, memcheck and racecheck on the new decode cases, the
# conformance suite, verified runs (gemma-2-9b over fp8: head 256), then the head-256 decode grid
# (bf16 and fp8) under B and under A (5376766), and B's head-192 quick grid.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s20/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure|rel err" $OUT/tests.log | head -20
F='CudaFlash.Fp8DecodeFormWideHeads:CudaFlash.EveryManifestHeadPair'
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter="$F" > /tmp/san.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1) ${SECONDS}s"; head -c 4000 /tmp/san.log > $OUT/san_memcheck.log
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Fp8DecodeFormWideHeads' > /tmp/san.log 2>&1; echo "racecheck rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1) ${SECONDS}s"; head -c 4000 /tmp/san.log > $OUT/san_racecheck.log
timeout 150 /tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'CUDA.*cells|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -8
{
for args in "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" ""; do
  echo "-- run --device cuda --verify $args"; timeout 100 /tmp/b/attnkit run --device cuda --verify $args; echo "rc=$?"
done
} > $OUT/runs.log 2>&1; echo "runs: $(grep -cE '^rc=0' $OUT/runs.log)/2 rc=0 ${SECONDS}s"
for bin in attnkit attnkit_A; do
  timeout 150 /tmp/b/$bin bench --device cuda --suite decode --decode-head 256 --out $OUT/decode256_$bin.jsonl > /dev/null 2>$OUT/decode256_$bin.err; echo "decode256 $bin rc=$? ${SECONDS}s"; tail -2 $OUT/decode256_$bin.err
done
timeout 60 /tmp/b/attnkit bench --device cuda --suite decode --quick --decode-head 192 --out $OUT/decode192.jsonl > /dev/null 2>&1; echo "decode192 rc=$? ${SECONDS}s"
python3 - $OUT/decode256_attnkit.jsonl $OUT/decode256_attnkit_A.jsonl $OUT/decode192.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    print('==', f.split('/')[-1])
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')!='decode': continue
        lens=r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}"
        g=lambda k: f"{r[k]*1e3:.1f}" if k in r else '-'
        print(lens, r['heads_kv'], r['kv_dtype'][:4], r.get('page'), r.get('form'), 's', r.get('splits'), 'us', g('ms'), f"{r.get('GBps',0):.0f}", 'clean', g('ms_clean_l2'), 'loop', g('ms_layer_loop'), f"{r.get('GBps_layer_loop',0):.0f}", 'probe', g('probe_ms'), 'ok', r.get('ok'), f"{r.get('check_rel_err',0):.1e}")
PY
