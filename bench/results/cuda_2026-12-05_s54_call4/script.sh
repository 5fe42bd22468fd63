#!/bin/bash
# Session 54, call 4: the final tree's device argument checks (the check kernel's block count now
# computed in 64 bits): their GPU test plain and under all four sanitizers; what the checks cost a
# serving run (qwen3-8b, 8 x 1000 tokens, chunked prefill and 8 decode steps; llama-3.1-8b 64
# decodes of 2000 tokens), without and with ATTNKIT_CUDA_CHECK_ARGS=1, alternating, three rounds.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r
for b in attnkit attnkit_test_backends; do xz -dc .devbin/s54c/$b.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
export ATTNKIT_MODELS_DIR=$PWD/models
S=/tmp/r/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
T='CudaFlash.DeviceArgumentChecksNameTheBadEntry'
timeout 60 /tmp/x/attnkit_test_backends --gtest_filter=$T > /tmp/r/checks_test.txt 2>&1
echo "checks test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/checks_test.txt | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck synccheck initcheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 /tmp/x/attnkit_test_backends --gtest_filter=$T > /tmp/r/sanitizer_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/r/sanitizer_$tool.txt | tail -1) ${SECONDS}s" >> $S
done
for round in 1 2 3; do
  for chk in 0 1; do
    for args in "--model qwen3-8b --requests 8 --prompt-len 1000 --decode-steps 8 --max-tokens-per-step 512" \
      "--model llama-3.1-8b --requests 64 --prompt-len 2000 --decode-steps 16 --max-tokens-per-step 8192"; do
      echo "-- round $round ATTNKIT_CUDA_CHECK_ARGS=$chk $args" >> /tmp/r/overhead.log
      timeout 60 env ATTNKIT_CUDA_CHECK_ARGS=$chk /tmp/x/attnkit run --device cuda --quiet $args >> /tmp/r/overhead.log 2>&1
      echo "overhead round $round check $chk [$args] rc=$? ${SECONDS}s" >> $S
    done
  done
done
grep -E '^-- |steps|attention$|s attention' /tmp/r/overhead.log >> $S
tar czf $OUT/call4.tgz -C /tmp/r .
cat $S
