#!/bin/bash
# Session 53, call 3: A = HEAD (45593e7), D = HEAD + the K/V scales read after the first tiles'
# copies (call 2's C without B's combine everywhere) + the combine's 16-split batch only above 32
# splits + CUDA_MLA's Hopper form reading the scales after its first copies too; both built here
# for sm_90a only. In order of need, each step only while time is left (LIMIT seconds, default
# 380): A/D alternating (A D A D) over the whole default decode suite and the MLA suite;
# D's CUDA conformance cells, verified serving runs, the CudaFlash/CudaMla GPU tests (less three
# slow ones that call 2 ran on C), memcheck on two split-decode tests. One tarball back.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r
for v in A D; do xz -dc .devbin/s53/attnkit$v.xz > /tmp/x/$v && chmod +x /tmp/x/$v; done
for b in attnkit_test_backends attnkit_test_conformance; do xz -dc .devbin/s53/$b.D.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
export ATTNKIT_MODELS_DIR=$PWD/models PYTHONUNBUFFERED=1
S=/tmp/r/summary.txt SECONDS=0 LIMIT=${LIMIT:-380}
t() { local want=$1; shift; local left=$((LIMIT - SECONDS)); [ $left -lt 15 ] && { echo "skipped (time): $*" >> $S; return 99; }; timeout $((left < want ? left : want)) "$@"; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,clocks.mem,memory.total,temperature.gpu,power.draw --format=csv,noheader > $S
for round in 1 2; do
  for v in A D; do
    t 60 /tmp/x/$v bench --device cuda --suite decode --out /tmp/r/ab_${v}_$round.jsonl > /dev/null 2> /tmp/r/ab_${v}_$round.err
    echo "ab $v round $round rc=$? ${SECONDS}s" >> $S
    t 40 /tmp/x/$v bench --device cuda --suite mla --out /tmp/r/mla_${v}_$round.jsonl > /dev/null 2> /tmp/r/mla_${v}_$round.err
    echo "mla $v round $round rc=$? ${SECONDS}s" >> $S
  done
done
t 60 /tmp/x/attnkit_test_conformance --gtest_filter='*CUDA*:-*Fuzz*' > /tmp/r/conformance_D.txt 2>&1
echo "D conformance rc=$? $(grep -E '^conformance: CUDA_FLASH |^\[  PASSED|^\[  FAILED' /tmp/r/conformance_D.txt | cut -c1-160 | tr '\n' ';') ${SECONDS}s" >> $S
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gpt-oss-20b --requests 2 --prompt-len 200" "--kv-cache-dtype fp8_e5m2 --requests 16 --prompt-len 2000 --decode-steps 8" \
  "--model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8"; do
  echo "-- D run --device cuda --verify $args" >> /tmp/r/run.log
  t 60 /tmp/x/D run --device cuda --verify $args >> /tmp/r/run.log 2>&1
  echo "D run [$args] rc=$? ${SECONDS}s" >> $S
done
grep -E '^-- |verification' /tmp/r/run.log >> $S
t 200 /tmp/x/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*:-CudaFlash.RaggedDecodeSplitsPerSequence:CudaFlash.Fp8SpeculativeDecodeTakesTheDecodeForm:CudaFlash.MlaMixedBatchesRunAsTwoParts' > /tmp/r/cuda_tests_D.txt 2>&1
echo "D cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/cuda_tests_D.txt | tr '\n' ';') $(grep -c '^\[       OK' /tmp/r/cuda_tests_D.txt) ok ${SECONDS}s" >> $S
t 90 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/x/attnkit_test_backends --gtest_filter='CudaFlash.ForcedSplitsWithSinksAndShortKeys:CudaFlash.GraphCaptureDecodeSplits:CudaFlash.Fp8E4m3PerTensor' > /tmp/r/memcheck_D.txt 2>&1
echo "D memcheck rc=$? $(grep -E 'ERROR SUMMARY' /tmp/r/memcheck_D.txt | tail -1) ${SECONDS}s" >> $S
tar czf $OUT/call3.tgz -C /tmp/r .
cat $S
