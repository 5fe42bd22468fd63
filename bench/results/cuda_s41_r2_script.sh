#!/bin/bash
# s41 device run 2 (CPU only): where lockstep for heads of several rows starts to cost on Intel
# cores. Session 38 measured it on the H200 host's 16 threads (a loss at GQA rows), session 41 on
# a 2-vCPU Intel VM (a gain), and the kept rule (b7ca3a2) takes it up to 4 threads. Binary: c962367
# (the rule before: one-row heads only on Intel) with the in-process A/B harness
# (cuda_s41_r2_lockstep_ab_harness.diff: after each decode row, a backend with lockstep forced on,
# timed call by call against the default, 16 calls each). One decode suite run per thread count.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s41/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
lscpu | grep -E "Model name|^CPU\(s\)|L3|Thread" | cut -c1-200 > $W/host_cpu.txt
for t in 2 4 8 16; do
  ATTNKIT_NUM_THREADS=$t AK_LOCKSTEP_AB=1 timeout 140 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode_ab_t$t.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode ab threads $t rc=$? ${SECONDS}s" >> $S; save
done
cat $S
