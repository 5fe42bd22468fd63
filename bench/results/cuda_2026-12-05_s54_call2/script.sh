#!/bin/bash
# Session 54, call 2: the opt-in device argument checks (CudaFlashOptions::check_args,
# ATTNKIT_CUDA_CHECK_ARGS=1), built here for sm_90a only. Their GPU test (every rule on CUDA_FLASH
# and CUDA_MLA, the graph-capture refusal, write_kv's slots) plain and under memcheck; verified
# serving runs with the checks on (real metadata must pass them: decode, chunked prefill, sinks,
# softcap and windows, MLA, chunked local attention, an encoder); the whole CudaFlash / CudaMla
# suite with the checks off beside them. One tarball back.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r
for b in attnkit attnkit_test_backends; do xz -dc .devbin/s54b/$b.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
export ATTNKIT_MODELS_DIR=$PWD/models PYTHONUNBUFFERED=1
S=/tmp/r/summary.txt SECONDS=0 LIMIT=${LIMIT:-500}
t() { local want=$1; shift; local left=$((LIMIT - SECONDS)); [ $left -lt 15 ] && { echo "skipped (time): $*" >> $S; return 99; }; timeout $((left < want ? left : want)) "$@"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
t 60 /tmp/x/attnkit_test_backends --gtest_filter='CudaFlash.DeviceArgumentChecksNameTheBadEntry' > /tmp/r/checks_test.txt 2>&1
echo "checks test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/checks_test.txt | tr '\n' ';') ${SECONDS}s" >> $S
(
  t 460 /tmp/x/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > /tmp/r/cuda_tests.txt 2>&1
  echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/cuda_tests.txt | tr '\n' ';') $(grep -c '^\[       OK' /tmp/r/cuda_tests.txt) ok ${SECONDS}s" >> $S
) &
t 120 compute-sanitizer --tool memcheck --error-exitcode 17 --print-limit 20 /tmp/x/attnkit_test_backends --gtest_filter='CudaFlash.DeviceArgumentChecksNameTheBadEntry' > /tmp/r/memcheck_checks.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' /tmp/r/memcheck_checks.txt | tail -1) ${SECONDS}s" >> $S
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gpt-oss-20b --requests 2 --prompt-len 200" \
  "--model qwen3-8b --requests 8 --prompt-len 1000 --decode-steps 8 --max-tokens-per-step 512" \
  "--model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model llama-4-scout-17b-16e-instruct --requests 2 --prompt-len 9000 --decode-steps 4 --max-tokens-per-step 4096" \
  "--model modernbert-base --dtype bfloat16 --requests 8 --prompt-len 1024 --max-tokens-per-step 4096"; do
  echo "-- ATTNKIT_CUDA_CHECK_ARGS=1 run --device cuda --verify $args" >> /tmp/r/run.log
  t 90 env ATTNKIT_CUDA_CHECK_ARGS=1 /tmp/x/attnkit run --device cuda --verify --quiet $args >> /tmp/r/run.log 2>&1
  echo "checked run [$args] rc=$? ${SECONDS}s" >> $S
done
grep -E '^-- |verif' /tmp/r/run.log >> $S
wait
tar czf $OUT/call2.tgz -C /tmp/r .
cat $S
