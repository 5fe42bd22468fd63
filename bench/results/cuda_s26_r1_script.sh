#!/bin/bash
# s26 device run 1: CUDA_FLASH serves encoder layers (the cu_seqlens_k form). The whole
# conformance suite (new encoder / encoder-only cells and ContiguousEncoderFormEqualsPaged),
# memcheck and racecheck on the new test, the runtime tests, verified GPU runs of the encoder-only
# model and of decoder models (the serving loop was refactored), and the encoder bench rows of
# attnkit (v3 and v2) beside the peers, two alternating rounds. Outputs in one archive.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s26/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
Z=/tmp/z B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
$Z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" > $S; grep -E 'cells checked|features change|undeclared|FAILED|Failure' $W/conformance.txt | cut -c1-220 >> $S
for t in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $t $Z/attnkit_test_conformance --gtest_filter='*ContiguousEncoder*/CUDA_FLASH*' > $W/san_$t.txt 2>&1
  echo "$t rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/san_$t.txt | tail -1) $(grep -E '^\[  PASSED' $W/san_$t.txt) ${SECONDS}s" >> $S
done
$Z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime_tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" >> $S
{ $B run --device cuda --verify --quiet --model snowflake-arctic-embed-m --dtype bfloat16
  $B run --device cuda --verify --quiet --model snowflake-arctic-embed-m --dtype bfloat16 --requests 64 --prompt-len 512
  $B run --device cuda --verify --quiet --model snowflake-arctic-embed-m --dtype float16 --kv-cache-dtype fp8_e4m3 --requests 16 --prompt-len 300 --max-tokens-per-step 1024
  $B run --device cuda --verify --quiet --model snowflake-arctic-embed-m --variant v2 --dtype bfloat16 --requests 7 --prompt-len 129 --max-tokens-per-step 400
  $B run --device cuda --verify --quiet
  $B run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8
  $B run --device cuda --verify --quiet --model paligemma-3b-pt-224 --dtype bfloat16 --requests 4 --prompt-len 400
  $B run --device cuda --verify --quiet --model gpt-oss-20b --requests 2 --prompt-len 200; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
$B run --device cuda --model snowflake-arctic-embed-m > $W/run_fp32.log 2>&1
echo "fp32 encoder on cuda rc=$? (expected 3: no fp32 kernels) ${SECONDS}s" >> $S
for r in 1 2; do
  for v in v3 v2; do
    $B bench --device cuda --suite encoder --variant $v --out $W/enc_${v}_$r.jsonl > /dev/null 2>>$W/err.txt
    echo "bench encoder $v round $r rc=$? ${SECONDS}s" >> $S
  done
  python3 bench/peers_gpu.py --suite encoder --out $W/peers_enc_$r.jsonl > /dev/null 2>>$W/err.txt
  echo "peers encoder round $r rc=$? ${SECONDS}s" >> $S
done
$B bench --device cuda --suite prefill --quick --out $W/prefill_quick.jsonl > /dev/null 2>>$W/err.txt
echo "bench prefill quick rc=$? ${SECONDS}s" >> $S
cat $S; tar czf $OUT/r1.tgz -C $W .
