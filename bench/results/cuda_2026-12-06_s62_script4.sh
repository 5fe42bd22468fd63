#!/bin/bash
# Session 62, device call 4: v2's prefill K/V copies on row lanes (8 lanes a row, a row address per
# lane's chunks) where a row has 16 chunks or more, 4 lanes at 12 chunks (b) against call 1's
# build d62fdee (a).
# .devbin/s62/bin.txz: attnkit, tests, conformance of the build (b), a/attnkit (a).
# 1. v2 prefill at 96 (4 lanes a row), 128 (page-packed copies: control), 160, 192, 224, 256,
# 192/128 and fp8-cache prefill at 192 (12 raw chunks) and 256: a, b, a, b; 2. ncu source
# counters of b at 96 and 192, 1k (instructions against call 3's 160 M and 169 M); 3. gpu_check's
# tests and conformance on b.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s62/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2; do for side in a b; do
  bin=$B/attnkit; [ $side = a ] && bin=$B/a/attnkit
  timeout 60 $bin bench --device cuda --suite prefill --variant v2 --prefill-heads 96,128,160,192,224,256,192/128 --out $OUT/prefill_v2_${side}_r$r.jsonl > $OUT/prefill_v2_${side}_r$r.log 2>&1
  echo "bench v2 $side r$r rc=$? ${SECONDS}s" >> $S
  timeout 60 $bin bench --device cuda --suite prefill --variant v2 --prefill-kv fp8_e4m3 --prefill-heads 192,256 --out $OUT/prefill_v2fp8_${side}_r$r.jsonl > $OUT/prefill_v2fp8_${side}_r$r.log 2>&1
  echo "bench v2 fp8 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
for h in 96 192; do
  timeout 100 ncu --set full --import-source no --kernel-name regex:flash_fwd_kernel --launch-count 1 -o /tmp/ak_$h $B/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads $h --out /tmp/x.jsonl > /tmp/ak_$h.log 2>&1
  echo "ncu b $h rc=$? ${SECONDS}s" >> $S
  ncu --import /tmp/ak_$h.ncu-rep --page source --csv --print-source sass > $OUT/ak_${h}_sass.csv 2>&1
done
timeout 210 bash scripts/gpu_check.sh --no-build --steps=tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/g/tests.log | head -5 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 100 $B/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-120 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log *.csv g && rm -rf *.jsonl *.log *.csv g gpu_check.txt conformance.txt
