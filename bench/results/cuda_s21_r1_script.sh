#!/bin/bash
# s21 device run: CPU_FLASH on the GPU host's CPU (AMX), the tests and the CPU bench.
cd "$(dirname "$0")" && mkdir -p x && tar xJf bin.txz -C x && cd x
export LD_LIBRARY_PATH=$PWD/lib
S=$OUT/summary.txt
{ echo "== lscpu"; lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-200; grep -o -E "amx_tile|avx512_bf16|avx512vbmi" /proc/cpuinfo | sort | uniq -c; } > $S
./attnkit_test_backends --gtest_filter='CpuFlash*:CpuReference*' > $OUT/cpu_tests.txt 2>&1; echo "cpu tests rc=$? $(tail -1 $OUT/cpu_tests.txt)" >> $S
./attnkit_test_conformance --gtest_filter='*CPU_FLASH*:*CPU_REFERENCE*' > $OUT/conf_default.txt 2>&1; echo "conformance default rc=$? $(grep -E 'cells checked' $OUT/conf_default.txt | head -2)" >> $S
for isa in avx512_bf16 avx512 avx2; do ATTNKIT_CPU_ISA=$isa ./attnkit_test_conformance --gtest_filter='*CPU_FLASH*' > $OUT/conf_$isa.txt 2>&1; echo "conformance $isa rc=$? $(grep -E 'CPU_FLASH [0-9]+ cells checked' $OUT/conf_$isa.txt | head -1 | cut -c1-80)" >> $S; done
./attnkit bench --device cpu --suite all > $OUT/cpu_bench_all_cores.jsonl 2>$OUT/cpu_bench_err.txt; echo "bench all cores rc=$?" >> $S
taskset -c 0,1 ./attnkit bench --device cpu --suite decode > $OUT/cpu_bench_2cores_decode.jsonl 2>>$OUT/cpu_bench_err.txt; echo "bench 2 cores rc=$?" >> $S
ATTNKIT_CPU_ISA=avx512 ./attnkit bench --device cpu --suite decode > $OUT/cpu_bench_all_cores_avx512_decode.jsonl 2>>$OUT/cpu_bench_err.txt; echo "bench avx512 rc=$?" >> $S
cat $S
