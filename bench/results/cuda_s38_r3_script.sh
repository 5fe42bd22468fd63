#!/bin/bash
# s38 device run 3 (CPU only): P.V's ticks every 16 keys for blocks of 8+ rows (pv_tick_keys;
# measured call by call on the Zen 4 VM) on the H200 host's Intel cores, whole processes
# alternating (the two builds' kernels cannot share a process): attnkit_A = f780502 (with run 1's
# inactive harness), attnkit = the change. Three rounds of the decode suite; then the CPU tests,
# the CPU conformance cells and three verified CPU runs on the change.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s38/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r3.tgz -C $W . ; }
for r in 1 2 3; do for b in attnkit_A attnkit; do
  timeout 100 /tmp/z/$b bench --device cpu --suite decode --out $W/cpu_decode_${b}_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode $b r$r rc=$? ${SECONDS}s" >> $S
done; save; done
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
