#!/bin/bash
# s23 device run 4: the session's final build on the H200 machine: every test (backends, kv), the
# conformance suite, verified runs on the GPU and on the host's CPU, then the CPU bench (all suites)
# on the host's 16 cores.
cd "$(dirname "$0")" && rm -rf z && mkdir -p z && tar xJf bin4.txz -C z && cd z
export LD_LIBRARY_PATH=$PWD/lib
S=$OUT/summary.txt
./attnkit_test_kv > $OUT/tests_kv.txt 2>&1; echo "kv tests rc=$? $(grep -E '^\[  PASSED|FAILED' $OUT/tests_kv.txt | head -3 | tr '\n' ' ')" > $S
./attnkit_test_backends > $OUT/tests.txt 2>&1; echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $OUT/tests.txt | head -3 | tr '\n' ' ')" >> $S
./attnkit_test_conformance > $OUT/conformance.txt 2>&1; echo "conformance rc=$?" >> $S; grep -E 'cells checked' $OUT/conformance.txt | cut -c1-160 >> $S
cd ../../..  # the repository root (models/)
B=.devbin/s23/z/attnkit
{ $B run --device cuda --verify; $B run --device cuda --verify --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8; $B run --device cpu --verify --model gpt-oss-20b --requests 2 --prompt-len 200; } > $OUT/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $OUT/run.log) verified" >> $S
$B bench --device cpu --suite all > $OUT/cpu_bench.jsonl 2>$OUT/cpu_bench.err; echo "cpu bench rc=$? $(wc -l < $OUT/cpu_bench.jsonl) rows" >> $S
cat $S
