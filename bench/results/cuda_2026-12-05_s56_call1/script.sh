#!/bin/bash
# Session 56, call 1: main at 09dff87 with session 55's unverified patch applied
# (cuda_2026-12-05_s55_check_args_values_prefixlm_unverified.patch, landed as 9a144bc: checks of slopes,
# sinks, fp8 scales and PrefixLM ranges), built here for sm_90a. Also the first GPU run of session
# 54's review commit 0d3ba86 (shared messages, OneBlockWrite). Correctness only, no timings:
# every CudaFlash / CudaMla GPU test, the four sanitizers on the check tests, the CUDA
# conformance cells, and verified serving runs with ATTNKIT_CUDA_CHECK_ARGS=1.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r
for b in attnkit attnkit_test_backends attnkit_test_conformance; do xz -dc .devbin/s56/$b.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
export ATTNKIT_MODELS_DIR=$PWD/models PYTHONUNBUFFERED=1
S=/tmp/r/summary.txt SECONDS=0 LIMIT=${LIMIT:-540}
t() { local want=$1; shift; local left=$((LIMIT - SECONDS)); [ $left -lt 15 ] && { echo "skipped (time): $*" >> $S; return 99; }; timeout $((left < want ? left : want)) "$@"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
(
  t 500 /tmp/x/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > /tmp/r/cuda_tests.txt 2>&1
  echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/cuda_tests.txt | tr '\n' ';') $(grep -c '^\[       OK' /tmp/r/cuda_tests.txt) ok ${SECONDS}s" >> $S
) &
T='CudaFlash.DeviceArgumentChecksNameTheBadEntry:CudaFlash.WriteKvRejectsNullVOnACacheWithV:CudaFlash.WriteKvEncodesLikeHost'
t 60 /tmp/x/attnkit_test_backends --gtest_filter=$T > /tmp/r/check_tests.txt 2>&1
echo "check tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/check_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck synccheck initcheck; do
  t 120 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 /tmp/x/attnkit_test_backends --gtest_filter=$T > /tmp/r/sanitizer_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/r/sanitizer_$tool.txt | tail -1) $(grep -c '^\[       OK' /tmp/r/sanitizer_$tool.txt) ok ${SECONDS}s" >> $S
done
t 150 /tmp/x/attnkit_test_conformance --gtest_filter='*CUDA*' > /tmp/r/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E '^(conformance|fuzz): CUDA|^\[  PASSED|^\[  FAILED' /tmp/r/conformance.txt | cut -c1-170 | tr '\n' ';') ${SECONDS}s" >> $S
export ATTNKIT_CUDA_CHECK_ARGS=1
for args in "" "--model paligemma-3b-pt-224 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gpt-oss-20b --requests 2 --prompt-len 200" \
  "--model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8"; do
  echo "-- ATTNKIT_CUDA_CHECK_ARGS=1 run --device cuda --verify $args" >> /tmp/r/run.log
  t 90 /tmp/x/attnkit run --device cuda --verify $args >> /tmp/r/run.log 2>&1
  echo "run [$args] rc=$? ${SECONDS}s" >> $S
done
grep -E '^-- |verification' /tmp/r/run.log >> $S
wait
tar czf $OUT/call1.tgz -C /tmp/r .
cat $S
