#!/bin/bash
# Session 61, device call 3: the Hopper form's 16-bit producer copying each tile as two halves of
# its rows where the chunk count does not divide the threads (no spill at heads 96, 192, 224;
# call 1's build spilled 24-96 bytes there). .devbin/s61/bin.txz: b = this build (attnkit,
# tests, conformance), attnkit_a = call 1's attnkit.
# 1. the v3 tests; 2. prefill A/B a/b at heads 96, 192, 224, two rounds; 3. gpu_check's
#    sanitizer step (29 listed tests, HopperFormSmall now 16-bit and fp8 at every head, under
#    memcheck, racecheck, synccheck, initcheck), --check-lists first; 4. conformance on b if
#    time is left.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s61/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 150 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Hopper*:CudaFlashDeclaration.*' > $OUT/hopper_tests.txt 2>&1
echo "hopper tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/hopper_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
for r in 1 2; do for v in a b; do
  bin=/tmp/b/attnkit; [ $v = a ] && bin=/tmp/b/attnkit_a
  timeout 60 $bin bench --device cuda --suite prefill --prefill-heads 96,192,224 --out $OUT/ab_${v}_r$r.jsonl > /dev/null 2>&1
  echo "bench $v r$r rc=$? ${SECONDS}s" >> $S
done; done
bash scripts/gpu_check.sh --check-lists; echo "check-lists rc=$?" >> $S
SAN_TIMEOUT=110 timeout 360 bash scripts/gpu_check.sh --no-build --steps=sanitizers $OUT/g > $OUT/sanitizers.txt 2>&1
echo "sanitizers rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/g/sanitizer-*.log | sort | uniq -c | tr '\n' ';') ${SECONDS}s" >> $S
[ $SECONDS -lt 470 ] && timeout 100 /tmp/b/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-120 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl g && rm -rf *.jsonl g sanitizers.txt hopper_tests.txt conformance.txt
