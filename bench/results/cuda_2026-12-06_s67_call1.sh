#!/bin/bash
# Session 67, device call 1: session 66's never-run call 3 (its script: _s66_script3.sh) on the
# tree at 07553a5, where the plan keeps the default split count over whole-tile pages when a
# settled batch's grid copies its first tiles early. 1. the split-count and early-copy tests, then
# every GPU test (scripts/gpu_check.sh --steps=tests); 2. 1x32k 32/4 and 32/8 auto / never (never:
# no early copy, the paged count), three rounds; 3. the decode grid auto / never; 4. the peers'
# decode rows; 5. three verified serving runs.
# .devbin/s67/bin.txz (not in git): attnkit and the backends test binary, sm_90a, built from 07553a5.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s67/bin.txz -C /tmp/b
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
TEST_BIN=$B/attnkit_test_backends ATTNKIT=$B/attnkit timeout $((560 - SECONDS)) scripts/gpu_check.sh --no-build --steps=tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests rc=$? $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/g/tests.log | cut -c1-80 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log tests.txt run*.txt gpu_check.txt g
