#!/bin/bash
# s46 device run 3: the shared-memory floor rule of run 2 (tiles.hpp decode_floor) applied to the
# 16-bit decode form too (four CTAs per SM at head 64, three at 80; two from 96 already).
# A = run 2's build (dc35d9e: the rule for fp8 only; its attnkit alone, bin2a), B = this tree's. Decode sets alternating A
# and B, two rounds; the peers at the 16-bit shapes that change; B's occupancy test, the
# conformance cells, the runtime tests, a verified run and every CudaFlash / CudaMla GPU test.
cd "$(dirname "$0")/../.." && rm -rf /tmp/a /tmp/b && mkdir -p /tmp/a /tmp/b
tar xJf .devbin/s46/bin2a.txz -C /tmp/a && tar xJf .devbin/s46/bin3.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r3.tgz -C $W . ; }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader >> $S
timeout 120 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.DecodeFormOccupancyByGrid:CudaFlashHost.*' > $W/occupancy_test.txt 2>&1
echo "occupancy test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $W/occupancy_test.txt | tr '\n' ';') ${SECONDS}s" >> $S
G1="--decode-heads 32/8 --decode-head 64 --decode-grid 1x32768,16x8192,64x4096,256x2048"
G2="--decode-heads 32/8 --decode-head 64 --decode-grid 4x8192,8x4096,32x2048"
E1="--decode-heads 32/32 --decode-head 80 --decode-grid 16x8192,64x4096"
W1="--decode-heads 20/20 --decode-head 64 --decode-grid 16x1500,64x1500"
H1="--decode-heads 32/8 --decode-head 128 --decode-grid 1x32768,64x4096"
for round in 1 2; do
  for set in G1 G2 E1 W1 H1; do
    for bin in a b; do
      o=$W/attnkit_${set}_${bin}_r$round
      LD_LIBRARY_PATH=/tmp/$bin/lib timeout 90 /tmp/$bin/attnkit bench --device cuda --suite decode ${!set} --out $o.jsonl > /dev/null 2> $o.err
      echo "attnkit $set $bin round $round rc=$? rows $(wc -l < $o.jsonl) ${SECONDS}s" >> $S
    done
  done
  save
done
for set in G1 G2 E1; do
  timeout 60 python3 bench/peers_gpu.py --suite decode ${!set} --out $W/peers_$set.jsonl > /dev/null 2> $W/peers_$set.err
  echo "peers $set rc=$? rows $(wc -l < $W/peers_$set.jsonl) ${SECONDS}s" >> $S
done
save
timeout 120 /tmp/b/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 100 /tmp/b/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $W/runtime_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
timeout 40 /tmp/b/attnkit run --device cuda --verify --quiet --model llama-3.2-1b --requests 64 --prompt-len 300 --decode-steps 8 >> $W/run.log 2>&1
echo "run llama-3.2-1b bf16 rc=$? ${SECONDS}s" >> $S
grep -E "verification|verified" $W/run.log | cut -c1-240 >> $S
save
timeout $((590 - SECONDS)) /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran|FAILED  \]' $W/cuda_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
