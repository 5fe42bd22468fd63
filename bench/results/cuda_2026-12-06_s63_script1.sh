#!/bin/bash
# Session 63, device call 1: v2's warp-pair prefill form on 8 warps (four pairs, 128 rows a CTA,
# FA2's tile at 192) (b) against bbcb20f's 4 warps / 64 rows (a).
# .devbin/s63/bin.txz: attnkit, tests, conformance of the build (b), a/attnkit (a).
# 1. v2 prefill at 160, 192, 224, 256, 192/128 and fp8-cache v2 prefill at 192 / 256 (the fp8
# form keeps 64-row CTAs; its grid now has its own row count): a b a b a b; 2. the peers on the
# same heads; 3. the CudaFlash GPU tests that reach heads 129..256 and conformance on b.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s63/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2 3; do for side in a b; do
  bin=$B/attnkit; [ $side = a ] && bin=$B/a/attnkit
  timeout 60 $bin bench --device cuda --suite prefill --variant v2 --prefill-heads 160,192,224,256,192/128 --out $OUT/prefill_v2_${side}_r$r.jsonl > $OUT/prefill_v2_${side}_r$r.log 2>&1
  echo "bench v2 $side r$r rc=$? ${SECONDS}s" >> $S
  timeout 60 $bin bench --device cuda --suite prefill --variant v2 --prefill-kv fp8_e4m3 --prefill-heads 192,256 --out $OUT/prefill_v2fp8_${side}_r$r.jsonl > $OUT/prefill_v2fp8_${side}_r$r.log 2>&1
  echo "bench v2 fp8 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
timeout 90 python3 bench/peers_gpu.py --suite prefill --prefill-heads 160,192,224,256 --out $OUT/peers.jsonl > $OUT/peers.log 2>&1
echo "peers rc=$? ${SECONDS}s" >> $S
timeout 200 $B/attnkit_test_backends --gtest_filter='CudaFlash.NonCausalMqaHead256:CudaFlash.WindowSoftcapAlibiSinks:CudaFlash.PrefixLm*:CudaFlash.Fp8*:CudaFlash.EveryManifestHeadPair:CudaFlash.Heads160And224:CudaFlash.PrefillOutputRowsOfAnyAlignment:CudaFlash.PagesHoldingWholeTiles:CudaFlash.GrowingLogits*:CudaFlash.ForcedSplits*:CudaFlash.GraphCapture*:CudaFlash.BlocksPastFourGiB:CudaFlash.MixedBatches*:CudaFlashHost.*' > $OUT/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 100 $B/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-120 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -rf *.jsonl *.log tests.txt conformance.txt
