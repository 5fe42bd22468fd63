#!/bin/bash
# s41 device run 1: the fp8 decode form at heads up to 128 as one CTA per SM of 8 warps (16 keys
# each of a 128-key tile, 4 stages; B, branch s41-fp8-8warp, sm_90a build) against main 39d0ec0
# (A, 4 warps, two CTAs per SM, 2 stages): the decode grid A B A B, B's 1x32k split sweep, then
# B's correctness: verified fp8 runs, the CUDA_FLASH GPU tests and conformance cells.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s41/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $W/nvidia-smi.txt 2>&1
for r in 1 2; do
  for v in A B; do
    timeout 90 /tmp/z/attnkit_$v bench --device cuda --suite decode --out $W/${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "$v r$r rc=$? ${SECONDS}s" >> $S
    save
  done
done
for n in 16 24 32 48 64; do
  timeout 40 /tmp/z/attnkit_B bench --device cuda --suite decode --decode-grid 1x32768 --splits $n --out $W/sweep_B_s$n.jsonl > /dev/null 2>> $W/err.txt
done
echo "sweep B rc=$? ${SECONDS}s" >> $S; save
for args in "--kv-cache-dtype fp8_e4m3" "--kv-cache-dtype fp8_e5m2 --requests 3 --prompt-len 777 --decode-steps 9" \
  "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" \
  "--model gpt-oss-20b --kv-cache-dtype fp8_e4m3 --requests 2 --prompt-len 200 --decode-steps 8"; do
  echo "-- $args" >> $W/run.log
  timeout 90 /tmp/z/attnkit_B run --device cuda --verify --quiet $args >> $W/run.log 2>&1
  echo "run B cuda '$args' rc=$? ${SECONDS}s" >> $S
done
grep -E "^-- |verification" $W/run.log >> $S; save
timeout 150 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:-CudaFlash.Mla*:CudaFlash.Hopper*:CudaFlash.WideHead512:CudaFlash.PrefixLm*:CudaFlash.ZeroPages*:CudaFlash.BlocksPastFourGiB:CudaFlash.GraphCapturePrefixLm*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $W/cuda_tests.txt | head -3 | tr '\n' ';') ${SECONDS}s" >> $S; save
timeout 150 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA_FLASH*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'cells checked|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-160 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
