#!/bin/bash
# s35 device run 1 (b62623a's build): the CPU_FLASH dot form (vdpbf16ps few-rows items) on the
# H200 host's Intel cores, where vdpbf16ps issues at a quarter of the FMA rate and the backend
# does not take it by itself: the CPU tests force it both ways on every variant there
# (MatchesFp64LoopOnEveryIsa), a second vendor's vdpbf16ps against the fp64 loop. Then the default
# verified run on both devices (no GPU code changed this session).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s35/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-400 > $W/host_cpu.txt
ATTNKIT_TEST_VERBOSE=1 timeout 200 /tmp/z/attnkit_test_backends --gtest_filter='CpuFlash*:CpuReference*' > $W/cpu_tests.txt 2>&1
echo "cpu tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/cpu_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
save
for d in cpu cuda; do
  timeout 60 /tmp/z/attnkit run --device $d --verify > $W/run_default_$d.log 2>&1
  echo "run $d rc=$? $(grep -c 'verification: OK' $W/run_default_$d.log) verified ${SECONDS}s" >> $S
done
save
cat $S
