#!/bin/bash
# s30 device run 4 (bin3 = bin2 + the run report's two-part step count + the
# ATTNKIT_CUDA_CONCURRENT_PARTS=0 switch): the runtime tests (a new CUDA one: qwen3-0.6b steps in
# parts, verified), the deepseek-v3 run gpu_check.sh now carries (five CUDA_MLA steps over the
# 32 MiB threshold, the last prefill step among them verified), and serving runs with concurrent
# parts on and off, alternating (qwen3-8b 64 x 2000 tokens as session 28; the deepseek-v3 run).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s30/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r4.tgz -C $W . ; }
timeout 120 /tmp/z/attnkit_test_runtime > $W/runtime.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED|SKIPPED' $W/runtime.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
save
DS="--model deepseek-v3 --requests 40 --prompt-len 1000 --decode-steps 16 --max-tokens-per-step 2048"
timeout 200 /tmp/z/attnkit run --device cuda --verify --quiet $DS > $W/run_deepseek_verify.log 2>&1
echo "deepseek verify rc=$? $(grep -c 'verification: OK' $W/run_deepseek_verify.log) verified; $(grep -E 'attention$|two parts' $W/run_deepseek_verify.log | tr '\n' ' ') ${SECONDS}s" >> $S
save
for r in 1 2 3; do
  for c in 1 0; do
    ATTNKIT_CUDA_CONCURRENT_PARTS=$c timeout 60 /tmp/z/attnkit run --device cuda --model qwen3-8b --requests 64 --prompt-len 2000 --decode-steps 32 --max-tokens-per-step 2048 > $W/qwen_c${c}_r$r.txt 2>&1
    echo "qwen3-8b concurrent=$c round $r rc=$? $(grep -E 'attention$|two parts' $W/qwen_c${c}_r$r.txt | tr '\n' ' ') ${SECONDS}s" >> $S
    ATTNKIT_CUDA_CONCURRENT_PARTS=$c timeout 100 /tmp/z/attnkit run --device cuda $DS > $W/deepseek_c${c}_r$r.txt 2>&1
    echo "deepseek concurrent=$c round $r rc=$? $(grep -E 'attention$|two parts' $W/deepseek_c${c}_r$r.txt | tr '\n' ' ') ${SECONDS}s" >> $S
    save
  done
done
cat $S
