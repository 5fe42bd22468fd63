#!/bin/bash
# Session 57, call 1: main at ff9da40 built here for sm_90a. The first GPU run of session 56's
# ba83b0b (test helpers moved; the -inf sink uploaded through restore_on_device) and f727fb1
# (backend_checks::checked_scales in CUDA_FLASH's device checks): every CudaFlash / CudaMla GPU
# test, the four sanitizers on the check tests, the CUDA conformance cells, two verified serving
# runs with ATTNKIT_CUDA_CHECK_ARGS=1, a fresh fuzz campaign (seed 57001, 600 cases a backend). Then, with the GPU idle, session 56's CPU_FLASH scratch
# alignment A/B on the host's cores (the s56 harness build: XAB=8, each row's backend timed call
# by call with its scratch at the aligned base and at base + 32 bytes, 12 rounds).
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r /tmp/c && mkdir -p /tmp/x /tmp/r /tmp/c
for b in attnkit attnkit_test_backends attnkit_test_conformance; do xz -dc .devbin/s57/$b.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
tar xJf .devbin/s56cpu/bin.txz -C /tmp/c
export ATTNKIT_MODELS_DIR=$PWD/models PYTHONUNBUFFERED=1
S=/tmp/r/summary.txt SECONDS=0 LIMIT=${LIMIT:-560}
t() { local want=$1; shift; local left=$((LIMIT - SECONDS)); [ $left -lt 15 ] && { echo "skipped (time): $*" >> $S; return 99; }; timeout $((left < want ? left : want)) "$@"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
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
for args in "" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  echo "-- ATTNKIT_CUDA_CHECK_ARGS=1 run --device cuda --verify $args" >> /tmp/r/run.log
  t 90 /tmp/x/attnkit run --device cuda --verify $args >> /tmp/r/run.log 2>&1
  echo "run [$args] rc=$? ${SECONDS}s" >> $S
done
unset ATTNKIT_CUDA_CHECK_ARGS
ATTNKIT_FUZZ_SEED=57001 ATTNKIT_FUZZ_CASES=600 t 100 /tmp/x/attnkit_test_conformance --gtest_filter='*Fuzz*CUDA*' > /tmp/r/fuzz_57001.txt 2>&1
echo "fuzz seed 57001 x600 rc=$? $(grep -E '^fuzz: CUDA|^\[  PASSED|^\[  FAILED' /tmp/r/fuzz_57001.txt | cut -c1-170 | tr '\n' ';') ${SECONDS}s" >> $S
grep -E '^-- |verification' /tmp/r/run.log >> $S
wait
echo "gpu part done ${SECONDS}s" >> $S
for suite in decode prefill; do
  XAB=8 LD_LIBRARY_PATH=/tmp/c/lib t $([ $suite = decode ] && echo 150 || echo 60) /tmp/c/attnkit bench --device cpu --suite $suite --out /tmp/r/cpu_xab8_$suite.jsonl > /tmp/r/cpu_xab8_$suite.log 2>&1
  echo "cpu xab8 $suite rc=$? rows $(grep -c xab /tmp/r/cpu_xab8_$suite.jsonl) ${SECONDS}s" >> $S
done
tar czf $OUT/call1.tgz -C /tmp/r .
cat $S
