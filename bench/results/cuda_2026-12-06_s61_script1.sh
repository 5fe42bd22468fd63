#!/bin/bash
# Session 61, device call 1: the Hopper prefill form at heads 80, 96, 160, 192 and 224 (tiles laid
# out at the next multiple of 64). Binaries: the sm_90a build of the change (.devbin/s61/bin.txz:
# attnkit, attnkit_test_backends, attnkit_test_conformance stripped, libfmt under lib/).
# 1. the v3 tests (HopperPrefillForm, HopperFp8FormSmall, the declaration tests);
# 2. prefill at heads 80..224: attnkit v3 (auto) and v2, then the peers (cuDNN, FA2), same shapes;
# 3. the conformance suite's CUDA cells (v3 now runs every head 64..256 on the Hopper form).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s61/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Hopper*:CudaFlashDeclaration.*' > $OUT/hopper_tests.txt 2>&1
echo "hopper tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/hopper_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
H=80,96,160,192,224
for v in auto v2; do
  timeout 100 /tmp/b/attnkit bench --device cuda --suite prefill --prefill-heads $H --variant $v --out $OUT/prefill_$v.jsonl > $OUT/prefill_$v.log 2>&1
  echo "bench $v rc=$? ${SECONDS}s" >> $S
done
timeout 100 python3 bench/peers_gpu.py --suite prefill --prefill-heads $H --out $OUT/peers.jsonl > $OUT/peers.log 2>&1
echo "peers rc=$? ${SECONDS}s" >> $S
timeout 200 /tmp/b/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -f *.jsonl *.log hopper_tests.txt conformance.txt
