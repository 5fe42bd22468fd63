#!/bin/bash
# Session 62, device call 6: the final commit's kernels (d45b290, built here for sm_90a only: the
# CUDA preset's two-arch binaries exceed the 64 MiB carry; .devbin/s62/bin.txz: attnkit and the
# test binary) through gpu_check.sh's serving runs and sanitizer step (29 small-shape tests under
# memcheck, racecheck, synccheck, initcheck), plus Heads160And224 under synccheck and initcheck
# (call 1 ran it under memcheck and racecheck).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s62/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 290 bash scripts/gpu_check.sh --no-build --steps=runs,sanitizers $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check runs,sanitizers rc=$? $(grep -c 'OK$' $OUT/g/run.log) runs OK; $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/g/sanitizer-*.log | sort | uniq -c | tr '\n' ';') ${SECONDS}s" >> $S
for tool in synccheck initcheck; do
  timeout 35 compute-sanitizer --tool $tool --error-exitcode 17 $B/attnkit_test_backends --gtest_filter='CudaFlash.Heads160And224' > $OUT/san_$tool.txt 2>&1
  echo "Heads160And224 $tool rc=$? $(grep -E 'ERROR SUMMARY|PASSED' $OUT/san_$tool.txt | tr '\n' ';') ${SECONDS}s" >> $S
done
cd $OUT && tar czf all.tgz gpu_check.txt g san_*.txt && rm -rf g gpu_check.txt san_*.txt
