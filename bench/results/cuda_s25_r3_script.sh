#!/bin/bash
# s25 device run 3: the session's final build. Every backend test and the runtime tests, the whole
# conformance suite, sanitizers on the PrefixLM tests, verified runs on the GPU (PaliGemma and Gemma 4,
# whose sliding layers are PrefixLM layers, over bf16 and fp8 caches, and the other models of
# earlier runs), and one round of the image prefill rows. Outputs in one archive.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s25/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
Z=/tmp/z B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
$Z/attnkit_test_backends > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" > $S
$Z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime_tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" >> $S
$Z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|features change|undeclared|FAILED' $W/conformance.txt | cut -c1-200 >> $S
for t in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $t $Z/attnkit_test_backends --gtest_filter='CudaFlash.PrefixLm*' > $W/san_$t.txt 2>&1
  echo "$t rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/san_$t.txt | tail -1) ${SECONDS}s" >> $S
done
{ $B run --device cuda --verify --quiet
  $B run --device cuda --verify --quiet --model paligemma-3b-pt-224 --dtype bfloat16 --requests 8 --prompt-len 600 --decode-steps 16
  $B run --device cuda --verify --quiet --model paligemma-3b-pt-224 --dtype float16 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 400
  $B run --device cuda --verify --quiet --model gemma-4-26b-a4b --requests 8 --prompt-len 1500 --decode-steps 16
  $B run --device cuda --verify --quiet --model gemma-4-26b-a4b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 600
  $B run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8
  $B run --device cuda --verify --quiet --model gpt-oss-20b --requests 2 --prompt-len 200; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
for v in v3 v2; do
  $B bench --device cuda --suite prefill --variant $v --prefill-image 256 --out $W/image_$v.jsonl > /dev/null 2>>$W/err.txt
  echo "bench image $v rc=$? ${SECONDS}s" >> $S
done
cat $S; tar czf $OUT/r3.tgz -C $W .
