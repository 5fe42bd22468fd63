#!/bin/bash
# Session 65, device call 2: the decode form copies its first tile before griddepcontrol.wait
# when the batch says earlier_rows_settled and the tile holds only keys below the rows' own
# (in Q's cp.async group; call 1's form copied every stage's tile and waited for all of them and
# Q, which queued Q behind them). The bench's rows say it unless --unsettled.
# 1. 1x32k 32/4 and 32/8, bf16 and fp8, pages 16/64/128: unsettled (u) / settled (s) alternating,
#    three rounds; 2. the whole decode grid u / s; 3. the new tests with the graph and
#    back-to-back decode tests, the chain test under racecheck; 4. three verified
#    serving runs (the runtime says it for self-attention layers).
# .devbin/s65b/bin.txz (not in git): attnkit and the backends test binary, sm_90a, built from
# 9b25680 with cuda_2026-12-06_s65_first_tile_early_prepared.diff. Never ran: no machine started.
# Superseded by cuda_2026-12-06_s66_script1.sh (session 66 replaced --unsettled by
# --early-copies never).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s65b/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2 3; do for e in u s; do
  a=; [ $e = u ] && a=--unsettled
  timeout 40 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 $a --out $OUT/d32k_${e}_r$r.jsonl > $OUT/d32k_${e}_r$r.log 2>&1
  echo "1x32k $e r$r rc=$? ${SECONDS}s" >> $S
done; done
for e in u s; do
  a=; [ $e = u ] && a=--unsettled
  timeout 90 $B/attnkit bench --device cuda --suite decode $a --out $OUT/grid_${e}_r1.jsonl > $OUT/grid_${e}_r1.log 2>&1
  echo "grid $e rc=$? ${SECONDS}s" >> $S
done
timeout 100 $B/attnkit_test_backends --gtest_filter='CudaFlash.EarlyCopies*:CudaFlash.BackToBack*:CudaFlash.GraphCaptureDecodeSplits' > $OUT/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
for tool in racecheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 17 $B/attnkit_test_backends --gtest_filter='CudaFlash.EarlyCopiesReadTheStepsKvWrite' > $OUT/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  PASSED|FAILED  \]' $OUT/san_$tool.txt | tr '\n' ';') ${SECONDS}s" >> $S
done
for m in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  timeout 90 $B/attnkit run --device cuda --verify $m > $OUT/run.txt 2>&1
  echo "run '$m' rc=$? $(grep -E '^verification' $OUT/run.txt) ${SECONDS}s" >> $S
  cat $OUT/run.txt >> $OUT/runs.txt
done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -rf *.jsonl *.log tests.txt san_*.txt run*.txt
