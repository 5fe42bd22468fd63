#!/bin/bash
# s31 device run 3: the final CPU_FLASH build (attnkit = 4f83044: pages walked together,
# one tile ahead, ticks inside the AMX products; attnkit_A = 2431625) on the H200 host: the decode
# suite three rounds alternating, the prefill suite one round each; the CPU tests, the conformance
# suite and verified CPU runs on the new build.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s31/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r3.tgz -C $W . ; }
for r in 1 2 3; do for b in attnkit attnkit_A; do
  timeout 150 /tmp/z/$b bench --device cpu --suite decode --out $W/cpu_decode_${b}_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode $b r$r rc=$? ${SECONDS}s" >> $S
done; save; done
for b in attnkit attnkit_A; do
  timeout 150 /tmp/z/$b bench --device cpu --suite prefill --out $W/cpu_prefill_${b}.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu prefill $b rc=$? ${SECONDS}s" >> $S
done; save
timeout 240 /tmp/z/attnkit_test_backends --gtest_filter='CpuFlash*:CpuReference*' > $W/cpu_tests.txt 2>&1
echo "cpu tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/cpu_tests.txt | head -3) ${SECONDS}s" >> $S
save
timeout 240 /tmp/z/attnkit_test_conformance --gtest_filter='*CPU*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'cells checked|FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
save
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  timeout 150 /tmp/z/attnkit run --device cpu --verify $args > $W/run_cpu_$(echo $args | cut -d' ' -f2 | tr -d ' ')x.log 2>&1
  echo "run cpu '$args' rc=$? ${SECONDS}s" >> $S
done
grep -h -E 'verification|GB/s' $W/run_cpu_*.log | head -20 >> $S
save
cat $S
