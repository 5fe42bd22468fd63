#!/bin/bash
# s42 device run 1 (CPU only): P.V in two loader steps for items of few rows (pv_two_steps) on the
# H200 host's Intel cores. Binary: the in-process A/B harness (cpu_2026-12-04_s42_pv_two_steps_ab_harness.diff
# on 1b087d9: every decode row's calls alternate A (one step, as 1b087d9) and B (two steps where
# pv_two_steps), `b_over_a` = A's median time / B's, `err_b` B's sampled error).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s42/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
lscpu | grep -E "Model name|^CPU\(s\)|L3|Thread|Flags" | cut -c1-400 > $W/host_cpu.txt
for i in 1 2 3; do
  AK_ONLY=decode_l2 timeout 60 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_l2_ab_$i.jsonl > /dev/null 2>>$W/err.txt
  echo "decode_l2 ab round $i rc=$? ${SECONDS}s" >> $S; save
done
timeout 200 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode_ab_t16.jsonl > /dev/null 2>>$W/err.txt
echo "decode ab 16 threads rc=$? ${SECONDS}s" >> $S; save
ATTNKIT_NUM_THREADS=2 timeout 220 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode_ab_t2.jsonl > /dev/null 2>>$W/err.txt
echo "decode ab 2 threads rc=$? ${SECONDS}s" >> $S; save
cat $S
