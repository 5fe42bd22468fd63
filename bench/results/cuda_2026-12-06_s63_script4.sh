#!/bin/bash
# Session 63, device call 4: the one-row fp8 decode at head 128 takes kLoneCtaTilesPaged's split
# count over pages of whole 128-key tiles (b; tiles.hpp fp8_decode_paged_count) against bbcb20f's
# plan (a).
# .devbin/s63/bin.txz: attnkit and the test binary of the build (b), a/attnkit (a).
# 1. decode 1x32k 32/4 and 32/8, bf16 and fp8, pages 16/64/128: a b a b a b; 2. b's whole decode
# grid once (every other row's split count must be a's, call 3); 3. DecodeSplitsSettledByPageSize.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s63/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2 3; do for side in a b; do
  bin=$B/attnkit; [ $side = a ] && bin=$B/a/attnkit
  timeout 40 $bin bench --device cuda --suite decode --decode-grid 1x32768 --decode-heads 32/4,32/8 --out $OUT/d32k_${side}_r$r.jsonl > $OUT/d32k_${side}_r$r.log 2>&1
  echo "1x32k $side r$r rc=$? ${SECONDS}s" >> $S
done; done
timeout 120 $B/attnkit bench --device cuda --suite decode --out $OUT/decode_grid_b.jsonl > $OUT/decode_grid_b.log 2>&1
echo "decode grid b rc=$? ${SECONDS}s" >> $S
timeout 60 $B/attnkit_test_backends --gtest_filter='CudaFlash.DecodeSplitsSettledByPageSize:CudaFlash.HeuristicSplitsLongDecode:CudaFlash.Fp8E4m3PerTensor' > $OUT/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -rf *.jsonl *.log tests.txt
