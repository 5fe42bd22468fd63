#!/bin/bash
# Session 62, device call 1: v2's warp-pair prefill form at heads 160 and 224 (V's last 32 dims
# split 16 / 16 between a pair's warps; they ran the two-stage ring of 32-key tiles).
# .devbin/s62/bin.txz: attnkit, tests, conformance of the build (b), a/attnkit of bf55fee (a).
# 1. v2 prefill at 160, 192 (control: unchanged kernel), 224: a, b, a, b; 2. the peers on the same
# shapes; 3. gpu_check's tests (bf55fee's HopperPrefillForm cases had not run on a GPU) and
# conformance; 4. Heads160And224 under memcheck and racecheck.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s62/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
H=160,192,224
for r in 1 2; do for side in a b; do
  bin=$B/attnkit; [ $side = a ] && bin=$B/a/attnkit
  timeout 60 $bin bench --device cuda --suite prefill --variant v2 --prefill-heads $H --out $OUT/prefill_v2_${side}_r$r.jsonl > $OUT/prefill_v2_${side}_r$r.log 2>&1
  echo "bench v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
timeout 90 python3 bench/peers_gpu.py --suite prefill --prefill-heads $H --out $OUT/peers.jsonl > $OUT/peers.log 2>&1
echo "peers rc=$? ${SECONDS}s" >> $S
timeout 200 bash scripts/gpu_check.sh --no-build --steps=tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/g/tests.log | head -5 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 100 $B/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-120 | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 17 $B/attnkit_test_backends --gtest_filter='CudaFlash.Heads160And224' > $OUT/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED' $OUT/san_$tool.txt | tr '\n' ';') ${SECONDS}s" >> $S
done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log g gpu_check.txt conformance.txt san_*.txt
