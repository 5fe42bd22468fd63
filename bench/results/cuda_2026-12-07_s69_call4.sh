#!/bin/bash
# Session 69, device call 4 (NEVER RAN in session 69: no machine, then too little device time
# to start one; session 70 ran it as the first part of cuda_2026-12-07_s70_call1.sh; ledger in
# cuda_2026-12-07_s69_device_time.txt): the randomized test on the GPU with a new seed
# (69001), the first new seed on a GPU since session 51's campaigns (conformance runs only the fixed
# 120-layer campaign); HEAD's conformance binary (.devbin/s68/bin.txz, not in git), one bounded run
# per CUDA backend: random layers against CPU_REFERENCE, then random write_kv draws.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s68/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models ATTNKIT_FUZZ_SEED=69001
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name --format=csv,noheader > $S
for b in CUDA_FLASH:${N1:-400}:70 CUDA_FLASH_v2:${N1:-400}:60 CUDA_MLA:${N2:-150}:40; do
  IFS=: read name n t <<<"$b"
  ATTNKIT_FUZZ_CASES=$n timeout $t /tmp/b/attnkit_test_conformance --gtest_filter="*Fuzz.*/$name" > $OUT/fuzz_$name.txt 2>&1
  echo "$name rc=$? $(grep -hE '^fuzz:|FAILED  \]' $OUT/fuzz_$name.txt | cut -c1-150 | tr '\n' ';') ${SECONDS}s" >> $S
done
