#!/bin/bash
# Session 54, call 6: A = HEAD 749bcf8 against B = A + one address per key tile in the fp8 decode
# form where a page holds whole 128-key tiles with packed rows (tiles.hpp packed_page_copies;
# the bench's HND cache at page 128), both built here for sm_90a. A B A B over the default decode
# suite (table by bench/results/cuda_s53_ab.py), then B's GPU tests of the page and fp8 paths.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r
for v in A B; do xz -dc .devbin/s54d/attnkit$v.xz > /tmp/x/$v && chmod +x /tmp/x/$v; done
xz -dc .devbin/s54d/attnkit_test_backends.B.xz > /tmp/x/tB && chmod +x /tmp/x/tB
export ATTNKIT_MODELS_DIR=$PWD/models
S=/tmp/r/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
for round in 1 2; do
  for v in A B; do
    timeout 90 /tmp/x/$v bench --device cuda --suite decode --out /tmp/r/ab_${v}_$round.jsonl > /dev/null 2> /tmp/r/ab_${v}_$round.err
    echo "decode $v round $round rc=$? ${SECONDS}s" >> $S
  done
done
timeout 150 /tmp/x/tB --gtest_filter='CudaFlash.PagesHoldingWholeTiles:CudaFlash.Fp8*:CudaFlash.DecodeFormEveryFeature:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode:CudaFlash.DecodeSplitsSettledByPageSize:CudaFlash.BlocksPastFourGiB:CudaFlash.GraphCaptureDecodeSplits:CudaFlash.RaggedDecodeEveryFeature' > /tmp/r/tests_B.txt 2>&1
echo "B tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/tests_B.txt | tr '\n' ';') $(grep -c '^\[       OK' /tmp/r/tests_B.txt) ok ${SECONDS}s" >> $S
tar czf $OUT/call6.tgz -C /tmp/r .
cat $S
