#!/bin/bash
# s46 device run 4: one build, the occupancy rule's A/B through `--decode-occupancy auto|floor|own`
# (CudaFlashOptions::decode_occupancy), two alternating rounds at the shapes where the rule
# decides (Whisper's 20/20 d64 over 1500 keys, 32/8 d64, 32/32 d80); a split sweep of the last
# 16-bit row behind cuDNN (Whisper batch 16 bf16, 0.87x) under the floor and without it; the
# occupancy and decode GPU tests.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b
tar xJf .devbin/s46/bin4.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r4.tgz -C $W . ; }
W1="--decode-heads 20/20 --decode-head 64 --decode-grid 16x1500,64x1500"
G1="--decode-heads 32/8 --decode-head 64 --decode-grid 1x32768,16x8192,64x4096"
E1="--decode-heads 32/32 --decode-head 80 --decode-grid 16x8192,64x4096"
for round in 1 2; do
  for set in W1 G1 E1; do
    for occ in auto floor own; do
      o=$W/attnkit_${set}_${occ}_r$round
      timeout 60 /tmp/b/attnkit bench --device cuda --suite decode ${!set} --decode-occupancy $occ --out $o.jsonl > /dev/null 2> $o.err
      echo "attnkit $set $occ round $round rc=$? rows $(wc -l < $o.jsonl) ${SECONDS}s" >> $S
    done
  done
  save
done
for occ in floor own; do
  for s in 1 2 3 4 6; do
    o=$W/sweep_${occ}_s$s
    timeout 60 /tmp/b/attnkit bench --device cuda --suite decode --decode-heads 20/20 --decode-head 64 --decode-grid 16x1500 --splits $s --decode-occupancy $occ --out $o.jsonl > /dev/null 2> $o.err
    echo "sweep $occ splits $s rc=$? ${SECONDS}s" >> $S
  done
done
save
timeout $((560 - SECONDS)) /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.DecodeFormOccupancyByGrid:CudaFlash*Decode*:CudaFlashHost.*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $W/cuda_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
