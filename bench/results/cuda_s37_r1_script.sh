#!/bin/bash
# s37 device run 1 (CPU only; no GPU code changed this session): CPU_FLASH's lockstep items with
# their next tile prefetched in address order (attnkit = 55cdb5f) against HEAD c807669's kernel
# with this session's bench (attnkit_A: shuffled block tables, pattern read in lockstep order) on
# the H200 host's Intel cores: the decode suite three rounds alternating, one round each over
# sequential block tables; the CPU tests, the CPU conformance cells and verified CPU runs on
# the new build.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s37/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
lscpu | grep -E "Model name|^CPU\(s\)|L3|Flags" | cut -c1-300 > $W/host_cpu.txt
for r in 1 2 3; do for b in attnkit attnkit_A; do
  timeout 100 /tmp/z/$b bench --device cpu --suite decode --out $W/cpu_decode_${b}_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode $b r$r rc=$? ${SECONDS}s" >> $S
done; save; done
for b in attnkit attnkit_A; do
  timeout 100 /tmp/z/$b bench --device cpu --suite decode --sequential-blocks --out $W/cpu_decode_${b}_seq.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode $b sequential rc=$? ${SECONDS}s" >> $S
done; save
timeout 120 /tmp/z/attnkit_test_backends --gtest_filter='CpuFlash*:CpuReference*' > $W/cpu_tests.txt 2>&1
echo "cpu tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/cpu_tests.txt | head -3 | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 120 /tmp/z/attnkit_test_conformance --gtest_filter='*CPU*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'cells checked|FAILED' $W/conformance.txt | cut -c1-120 | tr '\n' ';') ${SECONDS}s" >> $S
save
for args in "" "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  timeout 100 /tmp/z/attnkit run --device cpu --verify $args > $W/run_cpu_$(echo $args | cut -d' ' -f2 | tr -d ' ')x.log 2>&1
  echo "run cpu '$args' rc=$? $(grep -c 'verification: OK' $W/run_cpu_$(echo $args | cut -d' ' -f2 | tr -d ' ')x.log) ok ${SECONDS}s" >> $S
done
save
cat $S
