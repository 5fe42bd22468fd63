#!/bin/bash
# s27 device run 3 (final build, bin3): every v2 and combine kernel launched through one
# cudaLaunchKernelEx helper; CUDA_MLA's Hopper decode form as a programmatic dependent too
# (metadata and the first two tiles' block-table entries before the wait). Tests, conformance,
# runtime tests and verified runs (deepseek-v3 for CUDA_MLA); the MLA rows HEAD (bin0) / on / off,
# two rounds; the whole decode suite on and off for the per-layer table; memcheck last.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z /tmp/z0 && mkdir -p /tmp/z /tmp/z0
tar xJf .devbin/s27/bin3.txz -C /tmp/z && tar xJf .devbin/s27/bin0.txz -C /tmp/z0
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
cuobjdump --dump-resource-usage /tmp/z/attnkit 2>/dev/null | grep -A1 mla_hopper | grep -o 'REG:[0-9]* STACK:[0-9]*' | sort | uniq -c > $W/mla_res_usage.txt
echo "mla resource usage: $(cat $W/mla_res_usage.txt | tr '\n' ' ') ${SECONDS}s" > $S
/tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
/tmp/z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED|Failure' $W/conformance.txt | cut -c1-200 >> $S
/tmp/z/attnkit_test_runtime > $W/runtime.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
{ /tmp/z/attnkit run --device cuda --verify --quiet
  /tmp/z/attnkit run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8
  /tmp/z/attnkit run --device cuda --verify --quiet --model deepseek-v3 --requests 2 --prompt-len 100 --decode-steps 4
  ATTNKIT_CUDA_PDL=0 /tmp/z/attnkit run --device cuda --verify --quiet --model qwen3-8b --requests 4 --prompt-len 500 --decode-steps 8; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
G=1x1024,1x4096,1x32768,16x8192,64x4096
for r in 1 2; do
  for v in head on off; do
    B=/tmp/z/attnkit; [ $v = head ] && B=/tmp/z0/attnkit
    PDL=1; [ $v = off ] && PDL=0
    ATTNKIT_CUDA_PDL=$PDL timeout 100 $B bench --device cuda --suite mla --decode-grid $G \
      --out $W/mla_${v}_r$r.jsonl > /dev/null 2>>$W/err.txt
    echo "mla bench $v round $r rc=$? ${SECONDS}s" >> $S
  done
done
for v in on off; do
  PDL=1; [ $v = off ] && PDL=0
  ATTNKIT_CUDA_PDL=$PDL timeout 150 /tmp/z/attnkit bench --device cuda --suite decode --out $W/decode_$v.jsonl > /dev/null 2>>$W/err.txt
  echo "decode suite $v rc=$? ${SECONDS}s" >> $S
done
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash.MlaGraphCaptureDecodeSplits:CudaFlash.GraphCaptureDecodeSplits' > $W/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck.txt | tr '\n' ' ') ${SECONDS}s" >> $S
cat $S; tar czf $OUT/r3.tgz -C $W .
