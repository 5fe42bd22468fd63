#!/bin/bash
# s32 device run 2: the AMX items' prefetch ticks inside their products only (bin attnkit =
# 2e2b22b), against the fp8 loader's build (attnkit_F = 416916b) and session 31's (attnkit_A =
# c60a4f6) on the H200 host's CPU: the decode suite three rounds in turn; then on the new build the
# CPU tests, the conformance suite on the CPU backends and verified CPU runs.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s32/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
for r in 1 2 3; do for b in attnkit attnkit_F attnkit_A; do
  timeout 150 /tmp/z/$b bench --device cpu --suite decode --out $W/cpu_decode_${b}_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode $b r$r rc=$? ${SECONDS}s" >> $S
done; save; done
timeout 240 /tmp/z/attnkit_test_backends --gtest_filter='CpuFlash*:CpuReference*' > $W/cpu_tests.txt 2>&1
echo "cpu tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/cpu_tests.txt | head -3) ${SECONDS}s" >> $S
save
timeout 240 /tmp/z/attnkit_test_conformance --gtest_filter='*CPU*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'cells checked|FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
save
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  log=$W/run_cpu_$(echo "$args" | cut -d' ' -f2 | tr -d ' ')x.log
  timeout 150 /tmp/z/attnkit run --device cpu --verify $args > $log 2>&1
  echo "run cpu '$args' rc=$? $(grep -c 'verification: OK' $log) verified ${SECONDS}s" >> $S
done
save
cat $S
