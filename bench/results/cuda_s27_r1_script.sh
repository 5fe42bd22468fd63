#!/bin/bash
# s27 device run 1: the decode form as a programmatic dependent (PDL) of the stream's previous
# kernel. Experiment build (bin1): ATTNKIT_PDL=0 plain launch, 1 PDL with the wait first, 2 PDL
# with the metadata and the first block-table entries read before the wait; bin0 = HEAD 4ab4fcb.
# SASS against HEAD (prefill kernels must be unchanged), the CUDA_FLASH GPU tests under mode 2
# and the graph/ragged/back-to-back tests under mode 1, then the decode grid per variant
# (layer loop included), two alternating rounds.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z /tmp/z0 && mkdir -p /tmp/z /tmp/z0
tar xJf .devbin/s27/bin1.txz -C /tmp/z && tar xJf .devbin/s27/bin0.txz -C /tmp/z0
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > $W/gpu.txt 2>&1
python3 bench/results/sass_compare.py /tmp/z0/attnkit /tmp/z/attnkit > $W/sass_vs_head.txt 2>&1
echo "sass vs head rc=$? $(head -3 $W/sass_vs_head.txt | tr '\n' ' ') ${SECONDS}s" > $S
ATTNKIT_PDL=2 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*' > $W/tests_pdl2.txt 2>&1
echo "backend tests pdl2 rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests_pdl2.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
ATTNKIT_PDL=1 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash.BackToBack*:CudaFlash.GraphCapture*:CudaFlash.Ragged*:CudaFlash.Decode*' > $W/tests_pdl1.txt 2>&1
echo "backend tests pdl1 rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests_pdl1.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
G=1x1024,1x4096,4x2048,1x32768,16x8192,64x4096
for r in 1 2; do
  for v in head m0 m1 m2; do
    B=/tmp/z/attnkit; [ $v = head ] && B=/tmp/z0/attnkit
    ATTNKIT_PDL=${v#m} timeout 200 $B bench --device cuda --suite decode --quick --decode-grid $G \
      --out $W/dec_${v}_r$r.jsonl > /dev/null 2>>$W/err.txt
    echo "bench $v round $r rc=$? ${SECONDS}s" >> $S
  done
done
cat $S; tar czf $OUT/r1.tgz -C $W .
