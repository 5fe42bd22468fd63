#!/bin/bash
# Session 70, device call 1: session 69's unrun call 4 (the randomized test on the GPU with a new
# seed, 69001: random layers against CPU_REFERENCE, then random write_kv draws, one bounded run per
# CUDA backend), then gpu_check's bench and peer steps side by side on whatever card came. HEAD's
# binaries (.devbin/s68/bin.txz, not in git; kernels as 07553a5), sm_90a.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s68/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models ATTNKIT_FUZZ_SEED=69001
S=$OUT/summary.txt SECONDS=0 B=/tmp/b CAP=${CAP:-560}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for b in CUDA_FLASH:${N1:-400}:70 CUDA_FLASH_v2:${N1:-400}:60 CUDA_MLA:${N2:-150}:40; do
  IFS=: read name n t <<<"$b"
  ATTNKIT_FUZZ_CASES=$n timeout $t $B/attnkit_test_conformance --gtest_filter="*Fuzz.*/$name" > $OUT/fuzz_$name.txt 2>&1
  echo "$name rc=$? $(grep -hE '^fuzz:|FAILED  \]' $OUT/fuzz_$name.txt | cut -c1-150 | tr '\n' ';') ${SECONDS}s" >> $S
done
export TEST_BIN=$B/attnkit_test_backends CONF_BIN=$B/attnkit_test_conformance ATTNKIT=$B/attnkit
timeout $((CAP - SECONDS - 10)) scripts/gpu_check.sh --no-build --steps=bench,peers $OUT/g > $OUT/bench.txt 2>&1
echo "bench,peers rc=$? $(ls $OUT/g | tr '\n' ' ') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt g 2>/dev/null; rm -rf fuzz_*.txt bench.txt g; cat $S
