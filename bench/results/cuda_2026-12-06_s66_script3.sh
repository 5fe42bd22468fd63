#!/bin/bash
# Session 66, device call 3: the plan keeps the default split count over whole-tile pages where
# a settled batch's grid copies its first tiles early (cuda_flash_backend.cpp plan(); call 2:
# 1x32k 32/4 at 64 splits against the paged count's 32, 0.91-0.98x a layer). 1. the split-count
# and early-copy tests; 2. 1x32k 32/4 and 32/8 auto / never (never: no early copy, the paged
# count), three rounds; 3. the decode grid auto / never; 4. the peers' decode rows
# (bench/peers_gpu.py --suite decode); 5. three verified serving runs.
# .devbin/s66c/bin.txz (not in git): attnkit and the backends test binary, sm_90a, built from the
# tree this script was committed with. Never ran: no machine started after call 2 (ledger);
# session 67 ran its steps but the peers' decode rows, on an H100 (_s67_call1.sh, _calls2-4.sh).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s66c/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 90 $B/attnkit_test_backends --gtest_filter='CudaFlash.DecodeSplitsSettledByPageSize:CudaFlash.EarlyCopies*:CudaFlashHost.*' > $OUT/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
for r in 1 2 3; do for e in a n; do
  o=$([ $e = n ] && echo never || echo auto)
  timeout 40 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 --early-copies $o --out $OUT/d32k_${e}_r$r.jsonl > $OUT/d32k_${e}_r$r.log 2>&1
  echo "1x32k $e r$r rc=$? ${SECONDS}s" >> $S
done; done
for e in a n; do
  o=$([ $e = n ] && echo never || echo auto)
  timeout 60 $B/attnkit bench --device cuda --suite decode --early-copies $o --out $OUT/grid_${e}_r1.jsonl > $OUT/grid_${e}_r1.log 2>&1
  echo "grid $e rc=$? ${SECONDS}s" >> $S
done
PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers_gpu.py --suite decode --out $OUT/peers_decode.jsonl > $OUT/peers_decode.log 2>&1
echo "peers decode rc=$? ${SECONDS}s" >> $S
for m in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  timeout 60 $B/attnkit run --device cuda --verify $m > $OUT/run.txt 2>&1
  echo "run '$m' rc=$? $(grep -E '^verification' $OUT/run.txt) ${SECONDS}s" >> $S
  cat $OUT/run.txt >> $OUT/runs.txt
done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -rf *.jsonl *.log tests.txt run*.txt
