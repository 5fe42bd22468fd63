#!/bin/bash
# s34 device run 3: the decode form asks L2 for its first tiles' K/V rows before it waits for the
# previous kernel (B, sm_90a-only build) against HEAD 160be28 (A): B's CUDA tests, then the decode
# grid A B A B.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s34/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r3.tgz -C $W . ; }
timeout 150 /tmp/z/attnkit_test_backends --gtest_filter='Cuda*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  SKIPPED|FAILED' $W/cuda_tests.txt | head -6 | tr '\n' ';') ${SECONDS}s" >> $S
save
for r in 1 2; do
  for v in A B; do
    timeout 120 /tmp/z/attnkit_$v bench --device cuda --suite decode --out $W/${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "$v r$r rc=$? ${SECONDS}s" >> $S
    save
  done
done
cat $S
