#!/bin/bash
# s28 device run 3 (bin3): parts only for two runs (decodes first or last); other orders one
# part. CudaFlash tests (new: GraphCaptureTwoPartsReplanReplay), conformance, runtime tests,
# verified runs with chunked-prefill steps, memcheck and racecheck on the two new tests; the
# mixed suite once more (both heads) and SASS against bin2 (host code only: identical).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z /tmp/z2 && mkdir -p /tmp/z /tmp/z2
tar xJf .devbin/s28/bin3.txz -C /tmp/z && tar xJf .devbin/s28/bin2.txz -C /tmp/z2
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
python3 bench/results/sass_compare.py /tmp/z2/attnkit /tmp/z/attnkit > $W/sass_bin2_vs_bin3.txt 2>&1
echo "sass rc=$? $(head -1 $W/sass_bin2_vs_bin3.txt)" > $S
/tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -8 | tr '\n' ' ') ${SECONDS}s" >> $S
/tmp/z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | cut -c1-200 >> $S
/tmp/z/attnkit_test_runtime > $W/runtime.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
{ /tmp/z/attnkit run --device cuda --verify --quiet
  /tmp/z/attnkit run --device cuda --verify --quiet --model qwen3-8b --requests 8 --prompt-len 1000 --decode-steps 8 --max-tokens-per-step 512
  /tmp/z/attnkit run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 6 --prompt-len 700 --decode-steps 6 --max-tokens-per-step 256
  /tmp/z/attnkit run --device cuda --verify --quiet --model gpt-oss-20b --requests 4 --prompt-len 400 --max-tokens-per-step 256
  /tmp/z/attnkit run --device cuda --verify --quiet --model deepseek-v3 --requests 2 --prompt-len 100 --decode-steps 4; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
for t in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $t /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash.MixedBatches*:CudaFlash.GraphCaptureTwoParts*' > $W/sanitizer_$t.txt 2>&1
  echo "$t rc=$? $(grep 'ERROR SUMMARY' $W/sanitizer_$t.txt | tail -1) ${SECONDS}s" >> $S
done
timeout 120 /tmp/z/attnkit bench --device cuda --suite mixed --out $W/mixed_d128_bin3.jsonl > /dev/null 2>>$W/err.txt
timeout 120 /tmp/z/attnkit bench --device cuda --suite mixed --decode-head 256 --out $W/mixed_d256_bin3.jsonl > /dev/null 2>>$W/err.txt
echo "mixed bench rc=$? ${SECONDS}s" >> $S
cd $W && tar czf $OUT/r3.tgz .
cat $S
