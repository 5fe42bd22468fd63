#!/bin/bash
# Session 70, device call 2 (call 1's warm H100; exactly as run, as one command): the randomized
# test on the GPU with a second new seed (70001) and three times call 1's draws: 1200 layers and
# 1200 write_kv draws for CUDA_FLASH and CUDA_FLASH_v2, 400 for CUDA_MLA. HEAD's conformance
# binary (.devbin/s68/bin.txz, unpacked to /tmp/b by call 1).
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models ATTNKIT_FUZZ_SEED=70001; S=$OUT/summary.txt; SECONDS=0; nvidia-smi --query-gpu=name --format=csv,noheader > $S; for b in CUDA_FLASH:1200:130 CUDA_FLASH_v2:1200:120 CUDA_MLA:400:45; do IFS=: read name n t <<<"$b"; ATTNKIT_FUZZ_CASES=$n timeout $t /tmp/b/attnkit_test_conformance --gtest_filter="*Fuzz.*/$name" > $OUT/fuzz_$name.txt 2>&1; echo "$name rc=$? $(grep -hE '^fuzz:|FAILED  \]' $OUT/fuzz_$name.txt | cut -c1-150 | tr '\n' ';') ${SECONDS}s" >> $S; done; cd $OUT && tar czf all.tgz fuzz_*.txt && rm -f fuzz_*.txt; cat $S
