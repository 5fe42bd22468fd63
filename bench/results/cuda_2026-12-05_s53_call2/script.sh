#!/bin/bash
# Session 53, call 2: A = HEAD (45593e7), B = HEAD + the combine kernel loading up to 64 splits'
# partials in its first batch (kBatch 16 instead of 8), C = B + the decode and prefill forms
# reading the K/V scales after their first tiles' copies instead of before; all built here for
# sm_90a only.
# In order of need, each step only while time is left (LIMIT seconds, default 560):
# A/B/C alternating (A B C A B C) on the 1x32k and 16x8k decode rows (both dtypes, 32/8 and 32/4,
# pages 16/64/128, layer loop included); C's verified serving runs, its CUDA conformance cells and
# its split, graph, ragged, decode, fp8 and MLA GPU tests; then HEAD's whole decode
# suite beside the peer script, and the prefill suites. Everything is packed into one tarball.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r
for v in A B C; do xz -dc .devbin/s53/attnkit$v.xz > /tmp/x/$v && chmod +x /tmp/x/$v; done
for b in attnkit_test_backends attnkit_test_conformance; do xz -dc .devbin/s53/$b.C.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
export ATTNKIT_MODELS_DIR=$PWD/models PYTHONUNBUFFERED=1
S=/tmp/r/summary.txt SECONDS=0 LIMIT=${LIMIT:-560}
t() { local want=$1; shift; local left=$((LIMIT - SECONDS)); [ $left -lt 15 ] && { echo "skipped (time): $*" >> $S; return 99; }; timeout $((left < want ? left : want)) "$@"; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,clocks.mem,memory.total,temperature.gpu,power.draw --format=csv,noheader > $S
G=1x32768,16x8192
for round in 1 2; do
  for v in A B C; do
    t 90 /tmp/x/$v bench --device cuda --suite decode --decode-grid $G --out /tmp/r/ab_${v}_$round.jsonl > /tmp/r/ab_${v}_$round.log 2>&1
    echo "ab $v round $round rc=$? ${SECONDS}s" >> $S
  done
done
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gpt-oss-20b --requests 2 --prompt-len 200" "--kv-cache-dtype fp8_e5m2 --requests 16 --prompt-len 2000 --decode-steps 8"; do
  echo "-- C run --device cuda --verify $args" >> /tmp/r/run.log
  t 60 /tmp/x/C run --device cuda --verify $args >> /tmp/r/run.log 2>&1
  echo "C run [$args] rc=$? ${SECONDS}s" >> $S
done
grep -E '^-- |verification' /tmp/r/run.log >> $S
t 60 /tmp/x/attnkit_test_conformance --gtest_filter='*CUDA*:-*Fuzz*' > /tmp/r/conformance_C.txt 2>&1
echo "C conformance rc=$? $(grep -E '^conformance: CUDA_FLASH |^\[  PASSED|^\[  FAILED' /tmp/r/conformance_C.txt | cut -c1-160 | tr '\n' ';') ${SECONDS}s" >> $S
t 120 /tmp/x/attnkit_test_backends --gtest_filter='CudaFlash.*Split*:CudaFlash.*Graph*:CudaFlash.*Ragged*:CudaFlash.BackToBack*:CudaFlash.Decode*:CudaFlash.Fp8*:CudaFlash.Mla*' > /tmp/r/cuda_tests_C.txt 2>&1
echo "C cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/cuda_tests_C.txt | tr '\n' ';') $(grep -c '^\[       OK' /tmp/r/cuda_tests_C.txt) ok ${SECONDS}s" >> $S
t 200 /tmp/x/A bench --device cuda --suite decode --out /tmp/r/attnkit_decode.jsonl > /tmp/r/attnkit_decode.log 2>&1
echo "A bench decode rc=$? ${SECONDS}s" >> $S
t 150 python3 bench/peers_gpu.py --suite decode --out /tmp/r/peers_decode.jsonl > /tmp/r/peers_decode.log 2>&1
echo "peers decode rc=$? ${SECONDS}s" >> $S
t 120 /tmp/x/A bench --device cuda --suite prefill --out /tmp/r/attnkit_prefill.jsonl > /tmp/r/attnkit_prefill.log 2>&1
echo "A bench prefill rc=$? ${SECONDS}s" >> $S
t 120 python3 bench/peers_gpu.py --suite prefill --out /tmp/r/peers_prefill.jsonl > /tmp/r/peers_prefill.log 2>&1
echo "peers prefill rc=$? ${SECONDS}s" >> $S
tar czf $OUT/call2.tgz -C /tmp/r .
cat $S
