#!/bin/bash
# Session 67, device call 5: PagesHoldingWholeTiles (heads 80 and 96 added this session) and the
# other whole-tile and early-copy tests on the kept tree's copies (call 1 ran them on the build
# with the one-run copies, since reverted).
# .devbin/s67d/bin.txz (not in git): the backends test binary, sm_90a, built from this tree.
cd "$(dirname "$0")/../.." && rm -rf /tmp/d && mkdir -p /tmp/d && tar xJf .devbin/s67d/bin.txz -C /tmp/d
export LD_LIBRARY_PATH=/tmp/d/lib
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 60 /tmp/d/attnkit_test_backends --gtest_filter='CudaFlash.PagesHoldingWholeTiles:CudaFlash.DecodeSplitsSettledByPageSize:CudaFlash.EarlyCopies*:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode' > $OUT/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
cat $S
