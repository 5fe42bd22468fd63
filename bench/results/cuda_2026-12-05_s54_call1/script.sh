#!/bin/bash
# Session 54, call 1: HEAD a7f5539 (session 53's scale move and 16-split combine batch), built
# here for sm_90a only. What session 53's calls did not run on those kernels: every CudaFlash /
# CudaMla GPU test, the CUDA conformance cells with the randomized layers, verified serving runs,
# and the four sanitizers on the tests that take the combine's 16-split batch (more than 32 splits)
# and the fp8 decode form. Tests and sanitizers run side by side (correctness only; no timings
# in this call). One tarball back.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r
for b in attnkit attnkit_test_backends attnkit_test_conformance; do xz -dc .devbin/s54/$b.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
export ATTNKIT_MODELS_DIR=$PWD/models PYTHONUNBUFFERED=1
S=/tmp/r/summary.txt SECONDS=0 LIMIT=${LIMIT:-540}
t() { local want=$1; shift; local left=$((LIMIT - SECONDS)); [ $left -lt 15 ] && { echo "skipped (time): $*" >> $S; return 99; }; timeout $((left < want ? left : want)) "$@"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
(
  t 500 /tmp/x/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > /tmp/r/cuda_tests.txt 2>&1
  echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/cuda_tests.txt | tr '\n' ';') $(grep -c '^\[       OK' /tmp/r/cuda_tests.txt) ok ${SECONDS}s" >> $S
) &
SAN='CudaFlash.DecodeSplitsSettledByPageSize:CudaFlash.HeuristicSplitsLongDecode:CudaFlash.Fp8E4m3PerTensor:CudaFlash.Fp8E5m2PerHead:CudaFlash.GraphCaptureDecodeSplits:CudaFlash.MlaGraphCaptureDecodeSplits:CudaFlash.MlaLatentDecode'
for tool in memcheck racecheck synccheck initcheck; do
  t 110 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 /tmp/x/attnkit_test_backends --gtest_filter="$SAN" > /tmp/r/sanitizer_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/r/sanitizer_$tool.txt | tail -1) $(grep -c '^\[       OK' /tmp/r/sanitizer_$tool.txt) ok ${SECONDS}s" >> $S
done
t 150 /tmp/x/attnkit_test_conformance --gtest_filter='*CUDA*' > /tmp/r/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E '^(conformance|fuzz): CUDA|^\[  PASSED|^\[  FAILED' /tmp/r/conformance.txt | cut -c1-170 | tr '\n' ';') ${SECONDS}s" >> $S
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gpt-oss-20b --requests 2 --prompt-len 200" "--kv-cache-dtype fp8_e5m2 --requests 16 --prompt-len 2000 --decode-steps 8" \
  "--model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8"; do
  echo "-- run --device cuda --verify $args" >> /tmp/r/run.log
  t 60 /tmp/x/attnkit run --device cuda --verify $args >> /tmp/r/run.log 2>&1
  echo "run [$args] rc=$? ${SECONDS}s" >> $S
done
grep -E '^-- |verification' /tmp/r/run.log >> $S
wait
tar czf $OUT/call1.tgz -C /tmp/r .
cat $S
