#!/bin/bash
# Session 59, call 1: is a sequential read the ceiling of the GPU host's CPU reads? Sessions 57-58
# found the host's decode rows reading up to 1.23-1.43x of every sequential way of the bench's read
# ceiling. The toy (bench/results/cpu_2026-12-06_s59_shuffled_read_probe.cpp) times, on 16 threads,
# sequential reads beside runs of 4 KiB and 16 KiB (the decode's K/V runs at pages 16 and 64) in a
# shuffled order, with and without prefetches of the runs ahead; then one CPU decode suite
# (session 58's CPU bundle: main's bench less c2c1baf's refactor) with the GPU idle.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/r /tmp/c && mkdir -p /tmp/r /tmp/c
tar xJf .devbin/s58cpu/bin.txz -C /tmp/c
export ATTNKIT_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=/tmp/c/lib
S=/tmp/r/summary.txt SECONDS=0
nvidia-smi --query-gpu=name --format=csv,noheader > $S
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|L3|NUMA node\(s\)' >> $S
g++ -O2 -mavx512f -pthread -o /tmp/r/probe bench/results/cpu_2026-12-06_s59_shuffled_read_probe.cpp >> $S 2>&1
T=$(nproc)
for run in 4096 16384; do
  timeout 120 /tmp/r/probe $T 4096 $run 3 > /tmp/r/probe_$run.txt 2>&1
  echo "probe run $run rc=$? ${SECONDS}s" >> $S
done
timeout 200 /tmp/c/attnkit bench --device cpu --suite decode --out /tmp/r/cpu_decode.jsonl > /dev/null 2> /tmp/r/cpu_decode.err
echo "cpu decode rc=$? ${SECONDS}s" >> $S
timeout 120 /tmp/r/probe $T 4096 4096 2 > /tmp/r/probe_4096_after.txt 2>&1
echo "probe run 4096 (after) rc=$? ${SECONDS}s" >> $S
tar czf $OUT/call1.tgz -C /tmp/r . && cp $S $OUT/summary.txt && cat $S /tmp/r/probe_*.txt
