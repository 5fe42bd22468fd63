#!/bin/bash
# s26 device run 3: the head-64 Hopper threshold by mask (non-causal from 1k keys) and ModernBERT.
# SASS of every kernel against run 1's build (only host code changed), every GPU backend test and
# the conformance suite, verified GPU runs (ModernBERT's global and windowed encoder layers,
# the encoder-only model, decoder models), the encoder rows and the prefill grid as planned now
# beside the peers, two rounds. Outputs in one archive.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z /tmp/z1 && mkdir -p /tmp/z /tmp/z1
tar xJf .devbin/s26/bin3.txz -C /tmp/z && tar xJf .devbin/s26/bin1.txz -C /tmp/z1
export LD_LIBRARY_PATH=/tmp/z/lib
Z=/tmp/z B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
python3 bench/results/sass_compare.py /tmp/z1/attnkit $B > $W/sass_vs_r1.txt 2>&1
echo "sass vs r1 rc=$? $(head -3 $W/sass_vs_r1.txt | tr '\n' ' ') ${SECONDS}s" > $S
$Z/attnkit_test_backends > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" >> $S
$Z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | cut -c1-220 >> $S
$Z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime_tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" >> $S
{ $B run --device cuda --verify --quiet --model modernbert-base --dtype bfloat16 --requests 16 --prompt-len 1024 --max-tokens-per-step 4096
  $B run --device cuda --verify --quiet --model modernbert-base --dtype bfloat16 --requests 2 --prompt-len 2048 --max-tokens-per-step 4096
  $B run --device cuda --verify --quiet --model modernbert-base --dtype float16 --kv-cache-dtype fp8_e4m3 --requests 8 --prompt-len 300 --max-tokens-per-step 1200
  $B run --device cuda --verify --quiet --model modernbert-base --variant v2 --dtype bfloat16 --requests 5 --prompt-len 777 --max-tokens-per-step 1600
  $B run --device cuda --verify --quiet --model snowflake-arctic-embed-m --dtype bfloat16 --requests 64 --prompt-len 512 --max-tokens-per-step 4096
  $B run --device cuda --verify --quiet
  $B run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
for r in 1 2; do
  $B bench --device cuda --suite encoder --out $W/enc_$r.jsonl > /dev/null 2>>$W/err.txt
  echo "bench encoder round $r rc=$? ${SECONDS}s" >> $S
  python3 bench/peers_gpu.py --suite encoder --out $W/peers_enc_$r.jsonl > /dev/null 2>>$W/err.txt
  echo "peers encoder round $r rc=$? ${SECONDS}s" >> $S
  $B bench --device cuda --suite prefill --out $W/prefill_$r.jsonl > /dev/null 2>>$W/err.txt
  echo "bench prefill round $r rc=$? ${SECONDS}s" >> $S
done
python3 bench/peers_gpu.py --suite prefill --out $W/peers_prefill.jsonl > /dev/null 2>>$W/err.txt
echo "peers prefill rc=$? ${SECONDS}s" >> $S
cat $S; tar czf $OUT/r3.tgz -C $W .
