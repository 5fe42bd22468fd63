#!/bin/bash
# s26 device run 7: the head-64 Hopper rule as run 6 measured it (a window narrower than the
# sequence bounds each CTA's keys: the form from 1k such keys under either mask). SASS against
# run 1's build, the CUDA_FLASH GPU tests, conformance, verified runs (gpt-oss-20b's head-64
# sliding layers, ModernBERT), and the window grid as planned now, one round.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z /tmp/z1 && mkdir -p /tmp/z /tmp/z1
tar xJf .devbin/s26/bin7.txz -C /tmp/z && tar xJf .devbin/s26/bin1.txz -C /tmp/z1
export LD_LIBRARY_PATH=/tmp/z/lib
Z=/tmp/z B=/tmp/z/attnkit W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
python3 bench/results/sass_compare.py /tmp/z1/attnkit $B > $W/sass_vs_r1.txt 2>&1
echo "sass vs r1 rc=$? $(head -3 $W/sass_vs_r1.txt | tr '\n' ' ') ${SECONDS}s" > $S
$Z/attnkit_test_backends --gtest_filter='CudaFlash*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" >> $S
$Z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | cut -c1-220 >> $S
{ $B run --device cuda --verify --quiet --model gpt-oss-20b --requests 2 --prompt-len 200
  $B run --device cuda --verify --quiet --model modernbert-base --dtype bfloat16 --requests 8 --prompt-len 1024 --max-tokens-per-step 4096; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
for w in 256 1024 2048; do
  $B bench --device cuda --suite prefill --prefill-window $w --out $W/win${w}_planned.jsonl > /dev/null 2>>$W/err.txt
  echo "window $w planned rc=$? ${SECONDS}s" >> $S
done
$B bench --device cuda --suite encoder --out $W/enc.jsonl > /dev/null 2>>$W/err.txt
echo "encoder planned rc=$? ${SECONDS}s" >> $S
cat $S; tar czf $OUT/r7.tgz -C $W .
