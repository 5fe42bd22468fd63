#!/bin/bash
# Session 58, call 3: an H200 host's 16 cores, GPU idle. The AMX L1-prefetch A/B of
# bench/results/cpu_2026-12-06_s58_amx_l1_prefetch_ab_harness.diff (its last build, .devbin/s58h),
# XAB=1: each decode row's backend timed call by call with and without the prefetcht0 of the next
# 16-key groups in PathAmx's direct products (12 rounds), three runs; on the 2-vCPU VM the
# builds disagreed with each other.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/r3 && mkdir -p /tmp/r3
xz -dc .devbin/s58h/attnkit.xz > /tmp/r3/attnkit && chmod +x /tmp/r3/attnkit
mkdir -p /tmp/c && [ -d /tmp/c/lib ] || tar xJf .devbin/s58cpu/bin.txz -C /tmp/c ./lib
export LD_LIBRARY_PATH=/tmp/c/lib  # call 1's bundle (libfmt, OpenBLAS)
S=/tmp/r3/summary.txt SECONDS=0
for i in 1 2 3; do
  XAB=1 timeout 170 /tmp/r3/attnkit bench --device cpu --suite decode --out /tmp/r3/xab1_run$i.jsonl > /dev/null 2> /tmp/r3/xab1_run$i.err
  echo "xab1 run $i rc=$? rows $(grep -c xab /tmp/r3/xab1_run$i.jsonl) ${SECONDS}s" >> $S
done
rm /tmp/r3/attnkit && tar czf $OUT/call3.tgz -C /tmp/r3 . && cp $S $OUT/summary.txt && cat $S
