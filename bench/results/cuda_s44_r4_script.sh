#!/bin/bash
# s44 device run 4: `attnkit run --verify` with row sampling for long causal steps (a406df1): the
# bundled Llama-4-Scout over an fp8 cache with a 9000-token prompt in 4096-token steps (chunked
# layers cross their first 8192-token boundary; run 1's same command timed out at 120 s in the
# fp64 oracle), the default model, and the runtime tests (their CUDA ones included).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s44/bin4.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; cp $W/run.log $OUT/ 2>/dev/null; cp $W/runtime_tests.txt $OUT/ 2>/dev/null; }
for args in "--model llama-4-scout-17b-16e-instruct --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 9000 --decode-steps 4 --max-tokens-per-step 4096" \
  "--model llama-4-scout-17b-16e-instruct --requests 1 --prompt-len 16500 --decode-steps 2 --max-tokens-per-step 8192" ""; do
  echo "-- $args" >> $W/run.log
  timeout 200 /tmp/z/attnkit run --device cuda --verify $args >> $W/run.log 2>&1
  echo "run cuda '$args' rc=$? ${SECONDS}s" >> $S
  save
done
grep -E "^-- |verified|verification|chunk" $W/run.log | cut -c1-220 >> $S; save
timeout $((560 - SECONDS)) /tmp/z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED  \]|FAILED  \]' $W/runtime_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
