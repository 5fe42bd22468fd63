#!/bin/bash
# s38 device run 1 (CPU only; no GPU code changed): lockstep heads (session 36) on and off on the
# H200 host's Intel cores, measured in one process call by call. Session 37's run 2 alternated
# whole processes and the read ceiling moved with run position (inconclusive). Binary: a94df20
# with a throwaway bench addition (AK_LOCKSTEP_AB=1: after each decode row, a second backend with
# CpuFlashOptions::lockstep_heads = false is planned on the same inputs and the two are timed
# alternately, 16 calls each, the first of each pair switching; diff
# cuda_s38_r1_lockstep_ab_in_process.diff). Three runs of the decode suite over shuffled block
# tables, one over sequential ones.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s38/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
lscpu | grep -E "Model name|^CPU\(s\)|L3|Flags" | cut -c1-300 > $W/host_cpu.txt
for r in 1 2 3; do
  AK_LOCKSTEP_AB=1 timeout 150 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode_ab_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode ab r$r rc=$? ${SECONDS}s" >> $S; save
done
AK_LOCKSTEP_AB=1 timeout 150 /tmp/z/attnkit bench --device cpu --suite decode --sequential-blocks --out $W/cpu_decode_ab_seq.jsonl > /dev/null 2>>$W/err.txt
echo "cpu decode ab sequential rc=$? ${SECONDS}s" >> $S; save
cat $S
