#!/bin/bash
# s17 r6: ncu (full set, SASS source counters) of the 16-bit Hopper kernel at head 128, 4k keys,
# non-causal, bf16 cache: the consumers' stalls beside r3's fp8 profile of the same row, to see
# how much of fp8's gap is the consumers' own (wgmma beside the producer's stage traffic) and how
# much their waits on the producer.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s17e/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
timeout 150 ncu --kernel-name-base mangled --kernel-name regex:"ILi128E13__nv_bfloat16Lb0E" --launch-skip 55 --launch-count 1 --set full --import-source no -o /tmp/ncu_bf16 /tmp/b/attnkit bench --device cuda --suite prefill --variant v3 > /tmp/ncu_bf16.log 2>&1; echo "ncu bf16 rc=$? ${SECONDS}s"; tail -2 /tmp/ncu_bf16.log
ncu --import /tmp/ncu_bf16.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>&1; gzip -c /tmp/src.csv > $OUT/ncu_bf16_d128_source.csv.gz
ncu --import /tmp/ncu_bf16.ncu-rep --section WarpStateStats --section SchedulerStats --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis > $OUT/ncu_bf16_d128_summary.txt 2>&1
timeout 150 ncu --kernel-name-base mangled --kernel-name regex:"ILi128E13__nv_bfloat16Lb1E" --launch-skip 55 --launch-count 1 --section MemoryWorkloadAnalysis --section SpeedOfLight /tmp/b/attnkit bench --device cuda --suite prefill --variant v3 --prefill-kv fp8_e4m3 > $OUT/ncu_fp8_d128_memory.txt 2>&1; echo "ncu fp8 memory rc=$? ${SECONDS}s"
grep -E "Duration|Shared|Memory Throughput|L1/TEX Hit|Mem Busy|Max Bandwidth|Mem Pipes" $OUT/ncu_bf16_d128_summary.txt $OUT/ncu_fp8_d128_memory.txt | head -30
