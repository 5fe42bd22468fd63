#!/bin/bash
# Session 72, device call 2b (right after 2a, on its warm machine): (c) = (b) + the fp8 prefill's
# dequantization with lane l of a warp on row l (each 8-lane phase reads and writes 8 consecutive
# rows at one chunk) instead of a row's chunks on consecutive lanes (.devbin/s72c/bin.txz, not in
# git), against (b) in /tmp/b. 1. v2 prefill over fp8 caches at heads 64, 80, 96, 128, 192, 256,
# b c alternating, three rounds; 2. the four sanitizers on (c) over the 192-byte-row and fp8
# prefill tests; 3. the conformance suite and every GPU test on (c), while the call's time lasts.
# Without /tmp/b only (c)'s items run.
cd "$(dirname "$0")/../.." && rm -rf /tmp/c && mkdir -p /tmp/c && tar xJf .devbin/s72c/bin.txz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/lib ATTNKIT_MODELS_DIR=$PWD/models
SIDES="b c"; [ -x /tmp/b/attnkit ] || SIDES=c
S=$OUT/summary.txt SECONDS=0 C=/tmp/c CAP=${CAP:-450}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
echo "sides: $SIDES" >> $S
for r in 1 2 3; do for side in $SIDES; do
  timeout 60 /tmp/$side/attnkit bench --device cuda --suite prefill --variant v2 --prefill-kv fp8_e4m3 --prefill-heads 64,80,96,128,192,256 --out $OUT/fp8prefill_${side}_r$r.jsonl > $OUT/fp8prefill_${side}_r$r.log 2>&1
  echo "fp8 prefill v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
F='CudaFlash.SharedRows192EveryForm:CudaFlash.Fp8E4m3PerTensor:CudaFlash.Fp8E5m2PerHead:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode'
for tool in memcheck racecheck synccheck initcheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $C/attnkit_test_backends --gtest_filter="$F" > $OUT/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -hE 'SUMMARY|^\[  PASSED|^\[  FAILED' $OUT/san_$tool.log | tr '\n' ';') ${SECONDS}s" >> $S
done
export TEST_BIN=$C/attnkit_test_backends CONF_BIN=$C/attnkit_test_conformance ATTNKIT=$C/attnkit
timeout $((CAP - SECONDS)) scripts/gpu_check.sh --no-build --steps=conformance,tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check conformance,tests rc=$? $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/g/conformance.log $OUT/g/tests.log 2>/dev/null | cut -c1-80 | tr '\n' ';') $(grep -c '^\[       OK' $OUT/g/tests.log 2>/dev/null) tests OK ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g 2>/dev/null; rm -rf *.jsonl *.log gpu_check*.txt g
cat $S
