#!/bin/bash
# s24 device run 1: PrefixLM (mm_prefix) ranges in CUDA_FLASH's masks. The new build's GPU tests
# (CudaFlash.PrefixLmRanges in every kernel form), the conformance suite (now with mm-prefix
# cells), verified runs (PaliGemma in bf16 over bf16 and fp8 caches, the default model,
# gemma-2-9b), memcheck and racecheck on the new test, then prefill and decode rows of the
# previous kernels (attnkit_old: the same source before the mask change) and the new ones,
# alternating, two rounds.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s24/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
Z=/tmp/z S=$OUT/summary.txt
SECONDS=0
$Z/attnkit_test_backends --gtest_filter='CudaFlash*' > $OUT/tests.txt 2>&1; echo "gpu tests rc=$? $(grep -E '^\[  PASSED|FAILED' $OUT/tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" > $S
$Z/attnkit_test_conformance > $OUT/conformance.txt 2>&1; echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|features change' $OUT/conformance.txt | cut -c1-170 >> $S
B=$Z/attnkit
{ $B run --device cuda --verify --quiet --model paligemma-3b-pt-224 --dtype bfloat16
  $B run --device cuda --verify --quiet --model paligemma-3b-pt-224 --dtype bfloat16 --kv-cache-dtype fp8_e4m3 --requests 3 --prompt-len 600 --max-tokens-per-step 300
  $B run --device cuda --verify --quiet
  $B run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8; } > $OUT/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $OUT/run.log) verified ${SECONDS}s" >> $S
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $Z/attnkit_test_backends --gtest_filter='CudaFlash.PrefixLmRanges' > $OUT/sanitizer_$tool.txt 2>&1
  echo "$tool rc=$? $(tail -n 2 $OUT/sanitizer_$tool.txt | tr '\n' ' ') ${SECONDS}s" >> $S
done
for r in 1 2; do
  for v in old new; do
    bin=$Z/attnkit; [ $v = old ] && bin=$Z/attnkit_old
    timeout 100 $bin bench --device cuda --suite prefill > $OUT/prefill_${v}_r$r.jsonl 2>/dev/null; echo "prefill $v r$r rc=$? ${SECONDS}s" >> $S
    timeout 60 $bin bench --device cuda --suite decode --decode-grid 1x32768,16x8192,64x4096 > $OUT/decode_${v}_r$r.jsonl 2>/dev/null; echo "decode $v r$r rc=$? ${SECONDS}s" >> $S
  done
done
cat $S
