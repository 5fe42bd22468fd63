#!/bin/bash
# Session 65, device call 1: the decode form copies its first kStages tiles before
# griddepcontrol.wait when they hold only keys below the rows' own (experiment build, switch
# ATTNKIT_EXP_EARLY=1; 0 is the current order). 1. 1x32k 32/4 and 32/8, bf16 and fp8, pages
# 16/64/128, E0 E1 alternating, three rounds; 2. the whole decode grid E0 / E1 / E0 / E1;
# 3. the CUDA tests and a verified serving run with E1 (the KV write -> decode chain).
# .devbin/s65/bin.txz (not in git): attnkit and the test binaries, sm_90a, built from 9b25680 with
# call1/every_stage_early_not_kept.diff.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s65/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2 3; do for e in 0 1; do
  ATTNKIT_EXP_EARLY=$e timeout 40 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 --out $OUT/d32k_e${e}_r$r.jsonl > $OUT/d32k_e${e}_r$r.log 2>&1
  echo "1x32k e$e r$r rc=$? ${SECONDS}s" >> $S
done; done
for r in 1 2; do for e in 0 1; do
  ATTNKIT_EXP_EARLY=$e timeout 90 $B/attnkit bench --device cuda --suite decode --out $OUT/grid_e${e}_r$r.jsonl > $OUT/grid_e${e}_r$r.log 2>&1
  echo "grid e$e r$r rc=$? ${SECONDS}s" >> $S
done; done
ATTNKIT_EXP_EARLY=1 timeout 200 $B/attnkit_test_backends --gtest_filter='Cuda*' > $OUT/tests_e1.txt 2>&1
echo "tests e1 rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests_e1.txt | tr '\n' ';') ${SECONDS}s" >> $S
ATTNKIT_EXP_EARLY=1 timeout 60 $B/attnkit run --device cuda --verify > $OUT/run_e1.txt 2>&1
echo "run e1 rc=$? ${SECONDS}s" >> $S
ATTNKIT_EXP_EARLY=1 timeout 90 $B/attnkit run --device cuda --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 --verify > $OUT/run_gemma_e1.txt 2>&1
echo "run gemma e1 rc=$? ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -rf *.jsonl *.log tests_e1.txt run_*.txt
