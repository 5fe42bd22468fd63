#!/bin/bash
# Session 58, call 2: the same warm H200 right after call 1. The library and its GPU tests are
# unchanged since ff9da40 (git diff ff9da40 HEAD -- src include tests: only tests/cli), so session
# 57's sm_90a binaries (.devbin/s57) are main's: sessions 55-56's device checks and scale helper
# had run only on H100s; here every CudaFlash / CudaMla GPU test, the four sanitizers on the check
# tests, the CUDA conformance cells, verified serving runs with ATTNKIT_CUDA_CHECK_ARGS=1 and a
# fresh randomized campaign (seed 58001, 600 cases a backend) on the H200.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r /tmp/c
for b in attnkit attnkit_test_backends attnkit_test_conformance; do xz -dc .devbin/s57/$b.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
export ATTNKIT_MODELS_DIR=$PWD/models PYTHONUNBUFFERED=1
S=/tmp/r/summary.txt SECONDS=0 LIMIT=${LIMIT:-560}
t() { local want=$1; shift; local left=$((LIMIT - SECONDS)); [ $left -lt 15 ] && { echo "skipped (time): $*" >> $S; return 99; }; timeout $((left < want ? left : want)) "$@"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
export LD_LIBRARY_PATH=/tmp/c/lib  # libfmt from call 1's bundle, left in /tmp/c
lscpu | grep -E 'Model name|^CPU\(s\)|L3|Flags' | sed 's/Flags:.*\(amx[a-z_0-9 ]*\).*/Flags (amx): \1/' >> $S
(
  t 300 /tmp/x/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > /tmp/r/cuda_tests.txt 2>&1
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
for args in "" "--model gpt-oss-20b --requests 2 --prompt-len 200" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8"; do
  echo "-- ATTNKIT_CUDA_CHECK_ARGS=1 run --device cuda --verify $args" >> /tmp/r/run.log
  t 90 /tmp/x/attnkit run --device cuda --verify $args >> /tmp/r/run.log 2>&1
  echo "run [$args] rc=$? ${SECONDS}s" >> $S
done
unset ATTNKIT_CUDA_CHECK_ARGS
ATTNKIT_FUZZ_SEED=58001 ATTNKIT_FUZZ_CASES=600 t 120 /tmp/x/attnkit_test_conformance --gtest_filter='*Fuzz*CUDA*' > /tmp/r/fuzz_58001.txt 2>&1
echo "fuzz seed 58001 x600 rc=$? $(grep -E '^fuzz: CUDA|^\[  PASSED|^\[  FAILED' /tmp/r/fuzz_58001.txt | cut -c1-170 | tr '\n' ';') ${SECONDS}s" >> $S
grep -E '^-- |verification' /tmp/r/run.log >> $S
wait
echo "gpu part done ${SECONDS}s" >> $S
tar czf $OUT/call2.tgz -C /tmp/r . && cp $S $OUT/summary.txt && cat $S
