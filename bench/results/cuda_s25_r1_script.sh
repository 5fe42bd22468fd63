#!/bin/bash
# s25 device run 1: PrefixLM ranges on CUDA_FLASH (v2's prefill form, kMm instantiation).
# SASS of every kernel against e0f2bb2's build (the kMm kernels must be the only new bodies), the
# kMm kernels' registers, every CUDA test and the CUDA conformance entries, sanitizers on the new
# tests, verified PaliGemma runs on the GPU, and prefill rows with and without a 256-token image.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s25/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
Z=/tmp/z S=$OUT/summary.txt B=/tmp/z/attnkit
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $S
python3 bench/results/sass_compare.py $Z/attnkit_base $B > $OUT/sass_vs_e0f2bb2.txt 2>&1
head -1 $OUT/sass_vs_e0f2bb2.txt >> $S; grep -c added: $OUT/sass_vs_e0f2bb2.txt >> $S
cuobjdump -res-usage $B 2>&1 | grep -A1 "flash_fwd_kernel.*Lb0ELb1EEEv" > $OUT/kmm_res_usage.txt
grep -o "REG:[0-9]* STACK:[0-9]*" $OUT/kmm_res_usage.txt | sort | uniq -c >> $S
$Z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $OUT/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $OUT/tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" >> $S
grep -E "PrefixLm" $OUT/tests.txt >> $S
$Z/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|features change|undeclared|FAILED' $OUT/conformance.txt | cut -c1-200 >> $S
{ $B run --device cuda --verify --quiet
  $B run --device cuda --verify --quiet --model paligemma-3b-pt-224 --dtype bfloat16 --requests 8 --prompt-len 600 --decode-steps 16
  $B run --device cuda --verify --quiet --model paligemma-3b-pt-224 --dtype float16 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 400; } > $OUT/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $OUT/run.log) verified ${SECONDS}s" >> $S
$B bench --device cuda --suite prefill --prefill-image 256 --out $OUT/prefill_image.jsonl > /dev/null 2>$OUT/bench_err.txt; echo "bench image rc=$? ${SECONDS}s" >> $S
$B bench --device cuda --suite prefill --out $OUT/prefill_v3.jsonl > /dev/null 2>>$OUT/bench_err.txt; echo "bench v3 rc=$? ${SECONDS}s" >> $S
$B bench --device cuda --suite prefill --variant v2 --out $OUT/prefill_v2.jsonl > /dev/null 2>>$OUT/bench_err.txt; echo "bench v2 rc=$? ${SECONDS}s" >> $S
$B bench --device cuda --suite prefill --quick --prefill-kv fp8_e4m3 --prefill-image 256 --out $OUT/prefill_image_fp8.jsonl > /dev/null 2>>$OUT/bench_err.txt; echo "bench image fp8 rc=$? ${SECONDS}s" >> $S
for t in memcheck racecheck synccheck initcheck; do
  timeout 150 compute-sanitizer --tool $t $Z/attnkit_test_backends --gtest_filter='CudaFlash.PrefixLm*' > $OUT/san_$t.txt 2>&1
  echo "$t rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_$t.txt | tail -1) ${SECONDS}s" >> $S
done
cat $S
