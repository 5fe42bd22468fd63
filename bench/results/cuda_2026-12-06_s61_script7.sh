#!/bin/bash
# Session 61, device call 7: the fp8 raw ring's K and V items on the same lanes (call 6's
# racecheck found V copies of 192/128 landing on chunks other threads still converted as K).
# HopperFormSmall under the four sanitizers first, then the v3 tests and conformance.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s61/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for tool in racecheck memcheck synccheck initcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 17 $B/attnkit_test_backends --gtest_filter='CudaFlash.HopperFormSmall' > $OUT/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED' $OUT/san_$tool.txt | tr '\n' ';') ${SECONDS}s" >> $S
done
timeout 100 $B/attnkit_test_backends --gtest_filter='CudaFlash.Hopper*:CudaFlashDeclaration.*' > $OUT/hopper_tests.txt 2>&1
echo "hopper tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/hopper_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 80 $B/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-120 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 30 $B/attnkit bench --device cuda --suite prefill --prefill-heads 192/128 --prefill-kv fp8_e4m3 --out $OUT/prefill_fp8.jsonl > /dev/null 2>&1
echo "bench fp8 192/128 rc=$? ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl && rm -f *.jsonl hopper_tests.txt conformance.txt san_*.txt
