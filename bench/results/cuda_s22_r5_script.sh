#!/bin/bash
# s22 device run 5: the final build (e07222c, kAmxFewRows 8) on the H200 machine: every test (the new fp8 staging
# test on the host's AMX CPU), the conformance suite, verified runs on the GPU and the host's CPU.
cd "$(dirname "$0")" && mkdir -p x && tar xJf bin5.txz -C x && cd x
export LD_LIBRARY_PATH=$PWD/lib
S=$OUT/summary.txt
./attnkit_test_backends > $OUT/tests.txt 2>&1; echo "tests rc=$? $(grep -E '^\[  PASSED|FAILED' $OUT/tests.txt | head -3 | tr '\n' ' ')" > $S
grep -E "Fp8StagingTables|EveryFiniteFp8" $OUT/tests.txt | grep -E "OK|FAILED|SKIPPED" >> $S
./attnkit_test_conformance > $OUT/conformance.txt 2>&1; echo "conformance rc=$?" >> $S; grep -E 'cells checked' $OUT/conformance.txt | cut -c1-160 >> $S
cd ../../..  # the repository root (models/)
B=.devbin/s22/x/attnkit
{ $B run --device cuda --verify; $B run --device cuda --verify --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8; $B run --device cpu --verify --model gpt-oss-20b --requests 2 --prompt-len 200; } > $OUT/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $OUT/run.log) verified" >> $S
cat $S
