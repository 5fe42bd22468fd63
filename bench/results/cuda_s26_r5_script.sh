#!/bin/bash
# s26 device run 5: the head-64 Hopper rule counts the keys one CTA visits (a window bounds
# them). SASS against run 1's build, the CUDA_FLASH GPU tests and the conformance suite; then the
# prefill grid with a 128-token sliding window (gpt-oss's) as planned and with
# --hopper-any-length, and the encoder rows as planned, two alternating rounds.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z /tmp/z1 && mkdir -p /tmp/z /tmp/z1
tar xJf .devbin/s26/bin5.txz -C /tmp/z && tar xJf .devbin/s26/bin1.txz -C /tmp/z1
export LD_LIBRARY_PATH=/tmp/z/lib
Z=/tmp/z B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
python3 bench/results/sass_compare.py /tmp/z1/attnkit $B > $W/sass_vs_r1.txt 2>&1
echo "sass vs r1 rc=$? $(head -3 $W/sass_vs_r1.txt | tr '\n' ' ') ${SECONDS}s" > $S
$Z/attnkit_test_backends --gtest_filter='CudaFlash*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" >> $S
$Z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | cut -c1-220 >> $S
$B run --device cuda --verify --quiet --model gpt-oss-20b --requests 2 --prompt-len 200 > $W/run.log 2>&1
$B run --device cuda --verify --quiet --model modernbert-base --dtype bfloat16 --requests 8 --prompt-len 1024 --max-tokens-per-step 4096 >> $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
for r in 1 2; do
  $B bench --device cuda --suite prefill --prefill-window 128 --out $W/win_planned_$r.jsonl > /dev/null 2>>$W/err.txt
  echo "prefill window planned round $r rc=$? ${SECONDS}s" >> $S
  $B bench --device cuda --suite prefill --prefill-window 128 --hopper-any-length --out $W/win_any_$r.jsonl > /dev/null 2>>$W/err.txt
  echo "prefill window any-length round $r rc=$? ${SECONDS}s" >> $S
  $B bench --device cuda --suite encoder --out $W/enc_$r.jsonl > /dev/null 2>>$W/err.txt
  echo "encoder planned round $r rc=$? ${SECONDS}s" >> $S
done
cat $S; tar czf $OUT/r5.tgz -C $W .
