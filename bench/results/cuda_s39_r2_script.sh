#!/bin/bash
# s39 device run 2 (CPU only): which read loop reads fastest on the H200 host's 16 Intel cores
# (the decode rows there read 1.0-1.28x of the plain sequential ceiling in run 1): plain 64-byte
# sums, the same with prefetcht0 16 or 64 lines ahead, and 2/4/8 streams a thread
# (cuda_s39_r2_read_methods_micro.cpp); 16 and 8 threads, 1 and 4 GiB, three rounds each.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s39/rd.txz -C /tmp/z
for t in 16 8; do for g in 1 4; do echo "threads $t GiB $g"; timeout 100 /tmp/z/rd $t $g; done; done | tee $OUT/read_methods.txt
