#!/bin/bash
# Session 68, device call 1 (NEVER RAN: no machine started; ledger in
# cuda_2026-12-07_s68_device_time.txt): HEAD (54c0973; kernels as 07553a5) on whichever card
# comes, in the order of need for a short budget: 1. the tests that had not run on the kept tree
# (session 67's whole-tile-page cases at heads 80 and 96; the three tests that call its
# pdl_on()); 2. memcheck and racecheck on PagesHoldingWholeTiles; 3. every GPU test; 4. the
# conformance suite; 5. the verified serving runs; 6. 1x32k decode rows per layer while the
# call's time lasts.
# .devbin/s68/bin.txz (not in git): HEAD's attnkit, backends and conformance test binaries; sm_90a.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s68/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b CAP=${CAP:-560}
left() { echo $((CAP - SECONDS)); }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
export TEST_BIN=$B/attnkit_test_backends CONF_BIN=$B/attnkit_test_conformance ATTNKIT=$B/attnkit
timeout 60 $B/attnkit_test_backends --gtest_filter='CudaFlash.PagesHoldingWholeTiles:CudaFlash.EarlyCopies*:CudaFlash.DecodeSplitsSettledByPageSize' > $OUT/first.txt 2>&1
echo "first tests rc=$? $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/first.txt | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck; do
  [ $(left) -lt 30 ] && break
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 17 $B/attnkit_test_backends --gtest_filter=CudaFlash.PagesHoldingWholeTiles > $OUT/san_$tool.txt 2>&1
  echo "$tool PagesHoldingWholeTiles rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  PASSED' $OUT/san_$tool.txt | tr '\n' ';') ${SECONDS}s" >> $S
done
timeout $(($(left) - 60)) scripts/gpu_check.sh --no-build --steps=tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "tests rc=$? $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/g/tests.log | cut -c1-90 | tr '\n' ';') $(grep -c '^\[       OK' $OUT/g/tests.log) OK ${SECONDS}s" >> $S
[ $(left) -gt 45 ] && timeout $(($(left) - 20)) scripts/gpu_check.sh --no-build --steps=conformance $OUT/g > $OUT/conf.txt 2>&1
echo "conformance rc=$? $(grep -hE '^conformance: CUDA|^\[  PASSED|FAILED  \]' $OUT/g/conformance.log | cut -c1-80 | tr '\n' ';') ${SECONDS}s" >> $S
[ $(left) -gt 30 ] && timeout $(($(left) - 10)) scripts/gpu_check.sh --no-build --steps=runs $OUT/g > $OUT/runs.txt 2>&1
echo "runs rc=$? verification OK: $(grep -c '^verification: OK' $OUT/g/run.log) ${SECONDS}s" >> $S
for r in 1 2; do
  [ $(left) -lt 15 ] && break
  timeout 15 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 --out $OUT/d32k_r$r.jsonl > $OUT/d32k_r$r.log 2>&1
  echo "1x32k r$r rc=$? ${SECONDS}s" >> $S
done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g 2>/dev/null; rm -rf *.jsonl *.log first.txt san_*.txt conf.txt runs.txt gpu_check.txt g
