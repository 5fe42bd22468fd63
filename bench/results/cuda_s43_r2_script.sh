#!/bin/bash
# s43 device run 2: what the chunk costs layers without one. A (77c1fbb's build) against B (this
# tree: MaskPolicy's first visible key per row, the CTAs' latest first key precomputed) on the
# decode grid and the prefill suite, alternating A B B A; then the CUDA_FLASH GPU tests on B.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s43/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $W/nvidia-smi.txt 2>&1
for r in 1 2; do
  for v in $([ $r = 1 ] && echo A B || echo B A); do
    timeout 90 /tmp/z/attnkit_$v bench --device cuda --suite decode --out $W/decode_${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "decode $v r$r rc=$? ${SECONDS}s" >> $S
    timeout 90 /tmp/z/attnkit_$v bench --device cuda --suite prefill --out $W/prefill_${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "prefill $v r$r rc=$? ${SECONDS}s" >> $S
    save
  done
done
timeout 150 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $W/cuda_tests.txt | head -3 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
