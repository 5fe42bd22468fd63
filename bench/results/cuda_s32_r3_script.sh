#!/bin/bash
# s32 device run 3: the session's final build (62c7454) on the H200 machine: every test of the
# backends and runtime binaries (GPU and CPU), the conformance suite on every backend, verified
# runs on both devices, and one decode-suite run on the host's CPU with each CPU variant that this
# build can take there (amx_bf16, avx512_bf16 in its VBMI build).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s32/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r3.tgz -C $W . ; }
timeout 300 /tmp/z/attnkit_test_backends > $W/backend_tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|^\[  SKIPPED|FAILED' $W/backend_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 120 /tmp/z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  SKIPPED|FAILED' $W/runtime_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 240 /tmp/z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -cE 'cells checked' $W/conformance.txt) backends ${SECONDS}s" >> $S
grep -E 'cells checked' $W/conformance.txt | sed -E 's/\(.*worst error/: worst/' >> $S
save
for d in cpu cuda; do
  timeout 120 /tmp/z/attnkit run --device $d --verify > $W/run_default_$d.log 2>&1
  echo "run $d rc=$? $(grep -c 'verification: OK' $W/run_default_$d.log) verified ${SECONDS}s" >> $S
done
for args in "--model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  log=$W/run_cpu_$(echo "$args" | cut -d' ' -f2).log
  timeout 150 /tmp/z/attnkit run --device cpu --verify $args > $log 2>&1
  echo "run cpu '$args' rc=$? $(grep -c 'verification: OK' $log) verified ${SECONDS}s" >> $S
done
save
for isa in amx_bf16 avx512_bf16; do
  ATTNKIT_CPU_ISA=$isa timeout 150 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode_$isa.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode $isa rc=$? ${SECONDS}s" >> $S
done
save
cat $S
