#!/bin/bash
# Session 65, device call 2 (short form, for what was left of the device time): as
# cuda_2026-12-06_s65_script2.sh, two rounds of 1x32k, the decode grid u / s, the new tests,
# one verified serving run.
# Never ran: too little device time was left to start a machine.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s65b/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2; do for e in u s; do
  a=; [ $e = u ] && a=--unsettled
  timeout 40 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 $a --out $OUT/d32k_${e}_r$r.jsonl > $OUT/d32k_${e}_r$r.log 2>&1
  echo "1x32k $e r$r rc=$? ${SECONDS}s" >> $S
done; done
for e in u s; do
  a=; [ $e = u ] && a=--unsettled
  timeout 90 $B/attnkit bench --device cuda --suite decode $a --out $OUT/grid_${e}_r1.jsonl > $OUT/grid_${e}_r1.log 2>&1
  echo "grid $e rc=$? ${SECONDS}s" >> $S
done
timeout 60 $B/attnkit_test_backends --gtest_filter='CudaFlash.EarlyCopies*' > $OUT/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
timeout 30 $B/attnkit run --device cuda --verify > $OUT/run.txt 2>&1
echo "run rc=$? $(grep -E '^verification' $OUT/run.txt) ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -rf *.jsonl *.log tests.txt run.txt
