#!/bin/bash
# s32 device run 1: CPU_FLASH's fp8 few-rows loader (64 codes a step by VBMI byte tables) and the
# AMX variant in its own TU (bin attnkit = 416916b, attnkit_A = c60a4f6) on the H200 host's CPU: the
# decode suite three rounds alternating; then on the new build every test of the backends binary
# (GPU and CPU), the conformance suite on every backend, verified runs on both devices.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s32/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
(nvidia-smi; nproc; lscpu | grep -E 'Model name|^CPU\(s\)|L3|Flags' | cut -c1-300) > $W/machine.txt 2>&1
for r in 1 2 3; do for b in attnkit attnkit_A; do
  timeout 150 /tmp/z/$b bench --device cpu --suite decode --out $W/cpu_decode_${b}_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode $b r$r rc=$? ${SECONDS}s" >> $S
done; save; done
timeout 300 /tmp/z/attnkit_test_backends > $W/backend_tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|^\[  SKIPPED|FAILED' $W/backend_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 240 /tmp/z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -cE 'cells checked' $W/conformance.txt) backends; $(grep -E 'cells checked|FAILED' $W/conformance.txt | cut -c1-160 | tr '\n' ';') ${SECONDS}s" >> $S
save
for d in cpu cuda; do
  timeout 120 /tmp/z/attnkit run --device $d --verify > $W/run_default_$d.log 2>&1
  echo "run $d rc=$? $(grep -c 'verification: OK' $W/run_default_$d.log) verified ${SECONDS}s" >> $S
done
for args in "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  timeout 150 /tmp/z/attnkit run --device cpu --verify $args > $W/run_cpu_$(echo $args | cut -d' ' -f2 | tr -d ' ').log 2>&1
  echo "run cpu '$args' rc=$? $(grep -c 'verification: OK' $W/run_cpu_$(echo $args | cut -d' ' -f2 | tr -d ' ').log) verified ${SECONDS}s" >> $S
done
save
cat $S
