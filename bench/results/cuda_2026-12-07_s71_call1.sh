#!/bin/bash
# Session 71, device call 1: this session's build (696c86a: CPU_FLASH's ISA variants on target
# pragmas, constexpr fp8 decoders in numeric.hpp; CUDA kernels unchanged since 07553a5) on
# whichever card comes: every GPU test, the conformance suite, the verified serving runs, then
# 1x32k decode rows (both GQAs, bf16 and fp8) while the call's time lasts.
# .devbin/s71/bin.txz (not in git): attnkit, the backends and conformance test binaries (sm_80,
# sm_90a, compute_80 PTX; stripped), libcudart.so.13 and libfmt.so.9.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s71/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b CAP=${CAP:-570}
left() { echo $((CAP - SECONDS)); }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
export TEST_BIN=$B/attnkit_test_backends CONF_BIN=$B/attnkit_test_conformance ATTNKIT=$B/attnkit
timeout $(($(left) - 200)) scripts/gpu_check.sh --no-build --steps=tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "tests rc=$? $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/g/tests.log | cut -c1-90 | tr '\n' ';') $(grep -c '^\[       OK' $OUT/g/tests.log) OK ${SECONDS}s" >> $S
[ $(left) -gt 60 ] && timeout $(($(left) - 40)) scripts/gpu_check.sh --no-build --steps=conformance $OUT/g > $OUT/conf.txt 2>&1
echo "conformance rc=$? $(grep -hE '^conformance: CUDA|^\[  PASSED|FAILED  \]' $OUT/g/conformance.log | cut -c1-80 | tr '\n' ';') ${SECONDS}s" >> $S
[ $(left) -gt 30 ] && timeout $(($(left) - 10)) scripts/gpu_check.sh --no-build --steps=runs $OUT/g > $OUT/runs.txt 2>&1
echo "runs rc=$? verification OK: $(grep -c '^verification: OK' $OUT/g/run.log) ${SECONDS}s" >> $S
for r in 1 2; do
  [ $(left) -lt 15 ] && break
  timeout 15 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 --out $OUT/d32k_r$r.jsonl > $OUT/d32k_r$r.log 2>&1
  echo "1x32k r$r rc=$? ${SECONDS}s" >> $S
done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g 2>/dev/null; rm -rf *.jsonl *.log conf.txt runs.txt gpu_check.txt g; cat $S
