#!/bin/bash
# s24 device run 2: the PrefixLM widening moved into a non-inlined call (mm_widen) and out of the
# CTA's unmasked-tile band (r1's inlined form spilled in the 255-register prefill loops; v2 head 64
# at 1k ran 11% slower). The GPU tests, the conformance suite, verified runs (PaliGemma in bf16 over
# bf16 and fp8 caches, the default model, gemma-2-9b), memcheck/racecheck/synccheck/initcheck on the
# new test, then the previous kernels (attnkit_old) against the new ones, alternating, two rounds:
# prefill (default generation, and v2) and decode rows. Rows go to one archive (ab.tgz).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s24/bin2.txz -C /tmp/z
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
for tool in memcheck racecheck synccheck initcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $Z/attnkit_test_backends --gtest_filter='CudaFlash.PrefixLmRanges' > /tmp/san_$tool.txt 2>&1
  echo "$tool rc=$? $(tail -n 2 /tmp/san_$tool.txt | tr '\n' ' ') ${SECONDS}s" >> $S
done
mkdir -p /tmp/ab
for r in 1 2; do
  for v in old new; do
    bin=$Z/attnkit; [ $v = old ] && bin=$Z/attnkit_old
    timeout 60 $bin bench --device cuda --suite prefill > /tmp/ab/prefill_${v}_r$r.jsonl 2>/dev/null; echo "prefill $v r$r rc=$? ${SECONDS}s" >> $S
    timeout 60 $bin bench --device cuda --suite prefill --variant v2 > /tmp/ab/prefillv2_${v}_r$r.jsonl 2>/dev/null; echo "prefill v2 $v r$r rc=$? ${SECONDS}s" >> $S
    timeout 60 $bin bench --device cuda --suite decode --decode-grid 1x32768,16x8192,64x4096 > /tmp/ab/decode_${v}_r$r.jsonl 2>/dev/null; echo "decode $v r$r rc=$? ${SECONDS}s" >> $S
  done
done
tar czf $OUT/ab.tgz -C /tmp/ab .
cat $S
