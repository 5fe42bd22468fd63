#!/bin/bash
# Session 66, device call 1: the decode form copies its first cache tile before
# griddepcontrol.wait (in Q's cp.async group) where the batch says earlier_rows_settled and the
# launch's grid leaves the next layer's CTAs no free slot (tiles.hpp early_copies_pay).
# 1. 1x32k 32/4 and 32/8, bf16 and fp8, pages 16/64/128: --early-copies never (n) / auto (a) /
#    always (y) in turn, three rounds; 2. the whole decode grid n / a / y; 3. the early-copy tests
#    with the graph and back-to-back decode tests; 4. three verified serving runs (the runtime
#    says it for self-attention layers); 5. the sanitizer suite (which now holds the step-chain
#    test).
# .devbin/s66/bin.txz (not in git): attnkit and the backends test binary, sm_90a, built from the
# tree this script was committed with, but for EarlyCopiesChangeNoOutputBit's window and head-64
# cases and its decode-form check (fixed after this call; script 2).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s66/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2 3; do for e in n a y; do
  o=$([ $e = n ] && echo never || ([ $e = a ] && echo auto || echo always))
  timeout 40 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 --early-copies $o --out $OUT/d32k_${e}_r$r.jsonl > $OUT/d32k_${e}_r$r.log 2>&1
  echo "1x32k $e r$r rc=$? ${SECONDS}s" >> $S
done; done
for e in n a y; do
  o=$([ $e = n ] && echo never || ([ $e = a ] && echo auto || echo always))
  timeout 90 $B/attnkit bench --device cuda --suite decode --early-copies $o --out $OUT/grid_${e}_r1.jsonl > $OUT/grid_${e}_r1.log 2>&1
  echo "grid $e rc=$? ${SECONDS}s" >> $S
done
timeout 100 $B/attnkit_test_backends --gtest_filter='CudaFlash.EarlyCopies*:CudaFlashHost.EarlyCopies*:CudaFlash.BackToBack*:CudaFlash.GraphCaptureDecodeSplits' > $OUT/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
for m in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  timeout 90 $B/attnkit run --device cuda --verify $m > $OUT/run.txt 2>&1
  echo "run '$m' rc=$? $(grep -E '^verification' $OUT/run.txt) ${SECONDS}s" >> $S
  cat $OUT/run.txt >> $OUT/runs.txt
done
left=$((560 - SECONDS))
SAN_TIMEOUT=$(( left / 4 > 20 ? left / 4 : 20 )) TEST_BIN=$B/attnkit_test_backends scripts/gpu_check.sh --no-build --steps=sanitizers $OUT/g > $OUT/san.txt 2>&1
echo "sanitizers rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/g/sanitizer-*.log | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log tests.txt run*.txt g
