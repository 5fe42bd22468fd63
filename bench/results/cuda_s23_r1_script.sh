#!/bin/bash
# s23 device run 1 (HEAD after the host allocator change): tests (backends, kv: the huge-page
# allocator test), the conformance suite, verified runs on the GPU and on the host's CPU.
cd "$(dirname "$0")" && mkdir -p x && tar xJf bin1.txz -C x && cd x
export LD_LIBRARY_PATH=$PWD/lib
S=$OUT/summary.txt
nproc > $S; grep -m1 "model name" /proc/cpuinfo >> $S; cat /sys/kernel/mm/transparent_hugepage/enabled >> $S
./attnkit_test_kv > $OUT/tests_kv.txt 2>&1; echo "kv tests rc=$? $(grep -E '^\[  PASSED|FAILED' $OUT/tests_kv.txt | head -3 | tr '\n' ' ')" >> $S
grep -E "HostAllocator" $OUT/tests_kv.txt | grep -E "OK|FAILED" >> $S
./attnkit_test_backends > $OUT/tests.txt 2>&1; echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $OUT/tests.txt | head -3 | tr '\n' ' ')" >> $S
./attnkit_test_conformance > $OUT/conformance.txt 2>&1; echo "conformance rc=$?" >> $S; grep -E 'cells checked' $OUT/conformance.txt | cut -c1-160 >> $S
cd ../../..  # the repository root (models/)
B=.devbin/s23/x/attnkit
{ $B run --device cuda --verify; $B run --device cuda --verify --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8; $B run --device cpu --verify --model gpt-oss-20b --requests 2 --prompt-len 200; } > $OUT/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $OUT/run.log) verified" >> $S
cat $S
