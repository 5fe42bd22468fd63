#!/bin/bash
# s38 device run 2 (CPU only): the lockstep rule after run 1 (heads of several rows take
# lockstep only where cpu_flash::lockstep_multi_row_heads(), AMD cores; one-row heads
# everywhere), on the H200 host's Intel cores. The same in-process A/B as run 1 (the default
# backend against lockstep off, call by call): multi-row rows should now read ~1.0, MHA stay
# ahead. Then the CPU tests (lockstep forced both ways), the CPU conformance cells and three
# verified CPU runs on this build.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s38/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
for r in 1 2; do
  AK_LOCKSTEP_AB=1 timeout 150 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode_ab_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode ab r$r rc=$? ${SECONDS}s" >> $S; save
done
timeout 150 /tmp/z/attnkit_test_backends --gtest_filter='CpuFlash*:CpuReference*' > $W/cpu_tests.txt 2>&1
echo "cpu tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/cpu_tests.txt | head -3 | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 150 /tmp/z/attnkit_test_conformance --gtest_filter='*CPU*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'cells checked|FAILED' $W/conformance.txt | cut -c1-120 | tr '\n' ';') ${SECONDS}s" >> $S
save
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  log=$W/run_cpu_$(echo $args | cut -d' ' -f2 | tr -d ' ')x.log
  timeout 100 /tmp/z/attnkit run --device cpu --verify $args > $log 2>&1
  echo "run cpu '$args' rc=$? $(grep -c 'verification: OK' $log) ok ${SECONDS}s" >> $S
done
save
cat $S
