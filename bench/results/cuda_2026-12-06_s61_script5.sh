#!/bin/bash
# Session 61, device call 5: the committed build (two-half tile copies at heads 192 and 224
# only). .devbin/s61/bin.txz: attnkit, tests, conformance of that build.
# 1. the v3 tests; 2. conformance (CUDA cells); 3. HopperFormSmall under the four sanitizers;
# 4. the 16-bit prefill grid at every head 64..256 (auto: v3 on SM90) beside the peers;
# 5. prefill over an fp8 e4m3 cache at heads 64..256, auto (v3) and v2.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s61/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
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
H=64,80,96,128,160,192,224,256
timeout 60 $B/attnkit bench --device cuda --suite prefill --prefill-heads $H --out $OUT/prefill_auto.jsonl > /dev/null 2>&1
echo "bench auto rc=$? ${SECONDS}s" >> $S
timeout 100 python3 bench/peers_gpu.py --suite prefill --prefill-heads $H --out $OUT/peers.jsonl > $OUT/peers.log 2>&1
echo "peers rc=$? ${SECONDS}s" >> $S
for v in auto v2; do
  timeout 60 $B/attnkit bench --device cuda --suite prefill --prefill-heads $H --prefill-kv fp8_e4m3 --variant $v --out $OUT/prefill_fp8_$v.jsonl > /dev/null 2>&1
  echo "bench fp8 $v rc=$? ${SECONDS}s" >> $S
done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -f *.jsonl *.log hopper_tests.txt conformance.txt san_*.txt
