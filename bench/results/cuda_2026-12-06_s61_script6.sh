#!/bin/bash
# Session 61, device call 6: v3's Hopper form with K and V of their own widths (192/128, MLA's
# prefill pair). .devbin/s61/bin.txz: attnkit, tests, conformance of the build.
# 1. the v3 tests (new 192/128 cases) and the declarations; 2. conformance (v3 now declares
# 192/128); 3. HopperFormSmall under the four sanitizers; 4. prefill at 192/128 and 192, auto
# (v3) and v2, 16-bit and fp8 caches, and the peers on the same shapes; 5. gpu_check's tests and
# serving runs (the kernel template changed for every head: stage layout, fp8 raw maps).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s61/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 150 $B/attnkit_test_backends --gtest_filter='CudaFlash.Hopper*:CudaFlashDeclaration.*' > $OUT/hopper_tests.txt 2>&1
echo "hopper tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/hopper_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 100 $B/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-120 | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck synccheck initcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 17 $B/attnkit_test_backends --gtest_filter='CudaFlash.HopperFormSmall' > $OUT/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED' $OUT/san_$tool.txt | tr '\n' ';') ${SECONDS}s" >> $S
done
H=192/128,192
for kv in bfloat16 fp8_e4m3; do for v in auto v2; do
  timeout 60 $B/attnkit bench --device cuda --suite prefill --prefill-heads $H --prefill-kv $kv --variant $v --out $OUT/prefill_${kv}_$v.jsonl > $OUT/prefill_${kv}_$v.log 2>&1
  echo "bench $kv $v rc=$? ${SECONDS}s" >> $S
done; done
timeout 100 python3 bench/peers_gpu.py --suite prefill --prefill-heads $H --out $OUT/peers.jsonl > $OUT/peers.log 2>&1
echo "peers rc=$? ${SECONDS}s" >> $S
timeout 280 bash scripts/gpu_check.sh --no-build --steps=tests,runs $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests,runs rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/g/tests.log | head -5 | tr '\n' ';') $(grep -c 'OK$' $OUT/g/run.log) runs OK ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log g hopper_tests.txt conformance.txt san_*.txt gpu_check.txt
