#!/bin/bash
# s27 device run 2: the decode form as a programmatic dependent, second build (bin2): the first
# tiles' block-table entries requested before the wait, Q issued after it while they are in
# flight, the combine launched only once the kernel has passed its wait; the KV write and the
# combine let their dependents launch. ATTNKIT_CUDA_PDL=0 turns it off. bin0 = HEAD 4ab4fcb.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z /tmp/z0 && mkdir -p /tmp/z /tmp/z0
tar xJf .devbin/s27/bin2.txz -C /tmp/z && tar xJf .devbin/s27/bin0.txz -C /tmp/z0
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
sed 's/missing\[:20\]/missing/; s/added\[:40\]/added/' bench/results/sass_compare.py > /tmp/sc.py
python3 /tmp/sc.py /tmp/z0/attnkit /tmp/z/attnkit > $W/sass_vs_head.txt 2>&1
{ echo "sass vs head rc=$? $(head -1 $W/sass_vs_head.txt)"
  grep 'missing:' $W/sass_vs_head.txt | awk '{print $2}' | sort | uniq -c | tr '\n' ' '; echo
  echo "missing by kind:"; grep 'missing:' $W/sass_vs_head.txt | sed -E 's/.*cuda_(flash|mla)[0-9]+([a-z_]+)I.*E(6__half|13__nv_bfloat16)Lb([01])ELb([01])E.*/\2 fp8=\4 split=\5/; s/.*cuda_(flash|mla)[0-9]+([a-z_]+)I.*/\2/' | sort | uniq -c; } > $S
/tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
/tmp/z/attnkit_test_runtime > $W/runtime.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/runtime.txt | head -5 | tr '\n' ' ') ${SECONDS}s" >> $S
{ /tmp/z/attnkit run --device cuda --verify --quiet
  /tmp/z/attnkit run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8
  /tmp/z/attnkit run --device cuda --verify --quiet --model gpt-oss-20b --requests 2 --prompt-len 200; } > $W/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $W/run.log) verified ${SECONDS}s" >> $S
G=1x1024,1x4096,4x2048,1x32768,16x8192,64x4096
for r in 1 2; do
  for v in head on off; do
    B=/tmp/z/attnkit; [ $v = head ] && B=/tmp/z0/attnkit
    PDL=1; [ $v = off ] && PDL=0
    ATTNKIT_CUDA_PDL=$PDL timeout 200 $B bench --device cuda --suite decode --quick --decode-grid $G \
      --out $W/dec_${v}_r$r.jsonl > /dev/null 2>>$W/err.txt
    echo "bench $v round $r rc=$? ${SECONDS}s" >> $S
  done
done
cat $S; tar czf $OUT/r2.tgz -C $W .
