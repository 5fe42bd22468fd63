#!/bin/bash
# Session 67, device call 1. (b) = this session's build: session 66's plan (07553a5: 64 splits
# over whole-tile pages where a settled batch's grid copies early) plus heads 80 and 96's
# page-packed prefill copies (copy_packed_rows as one run of chunks); (a) = 07553a5's attnkit.
# 1. the split-count, early-copy and whole-tile-page tests; 2. v2 prefill at heads 80, 96 and 128
# (control: its copies are unchanged), a b a b a b; 3. the peers' prefill rows at those heads;
# 4. 1x32k 32/4 and 32/8 auto / never (never: no early copy, the paged count), three rounds;
# 5. three verified serving runs; 6. every GPU test (gpu_check.sh --steps=tests); 7. the decode
# grid auto / never while the call's time lasts. (Ordered by need: seven attempts found no machine.)
# .devbin/s67a/bin.txz (not in git): (a)'s attnkit; .devbin/s67b/bin.txz: (b)'s attnkit and
# backends test binary; sm_90a.
cd "$(dirname "$0")/../.." && rm -rf /tmp/a /tmp/b && mkdir -p /tmp/a /tmp/b
tar xJf .devbin/s67a/bin.txz -C /tmp/a && tar xJf .devbin/s67b/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 120 $B/attnkit_test_backends --gtest_filter='CudaFlash.DecodeSplitsSettledByPageSize:CudaFlash.EarlyCopies*:CudaFlashHost.*:CudaFlash.PagesHoldingWholeTiles' > $OUT/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
for r in 1 2 3; do for side in a b; do
  timeout 60 /tmp/$side/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 80,96,128 --out $OUT/prefill_${side}_r$r.jsonl > $OUT/prefill_${side}_r$r.log 2>&1
  echo "prefill v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
PYTHONUNBUFFERED=1 timeout 150 python3 bench/peers_gpu.py --suite prefill --prefill-heads 80,96,128 --out $OUT/peers_prefill.jsonl > $OUT/peers_prefill.log 2>&1
echo "peers prefill rc=$? ${SECONDS}s" >> $S
for r in 1 2 3; do for e in a n; do
  o=$([ $e = n ] && echo never || echo auto)
  timeout 40 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 --early-copies $o --out $OUT/d32k_${e}_r$r.jsonl > $OUT/d32k_${e}_r$r.log 2>&1
  echo "1x32k $e r$r rc=$? ${SECONDS}s" >> $S
done; done
for m in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  timeout 60 $B/attnkit run --device cuda --verify $m > $OUT/run.txt 2>&1
  echo "run '$m' rc=$? $(grep -E '^verification' $OUT/run.txt) ${SECONDS}s" >> $S
  cat $OUT/run.txt >> $OUT/runs.txt
done
TEST_BIN=$B/attnkit_test_backends ATTNKIT=$B/attnkit timeout $((${CAP:-520} - SECONDS)) scripts/gpu_check.sh --no-build --steps=tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests rc=$? $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/g/tests.log | cut -c1-80 | tr '\n' ';') ${SECONDS}s" >> $S
for e in a n; do
  [ $SECONDS -gt $((${CAP:-520} - 60)) ] && break
  o=$([ $e = n ] && echo never || echo auto)
  timeout $((${CAP:-520} + 60 - SECONDS)) $B/attnkit bench --device cuda --suite decode --early-copies $o --out $OUT/grid_${e}_r1.jsonl > $OUT/grid_${e}_r1.log 2>&1
  echo "grid $e rc=$? ${SECONDS}s" >> $S
done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log tests.txt run*.txt gpu_check.txt g
