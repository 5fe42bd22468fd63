#!/bin/bash
# s37 device run 2 (CPU only): lockstep heads (session 36) on and off on the H200 host's Intel
# cores, where they were never measured. One binary: 41e70ae with a throwaway switch in the
# bench (ATTNKIT_LOCKSTEP=0: CpuFlashOptions::lockstep_heads = false; diff
# cuda_s37_r2_lockstep_switch.diff). With the switch unset it is the session's final code, whose
# lockstep items on Intel prefetch one head ahead in turns (HEAD c807669's order). Five alternating
# rounds of the decode suite (shuffled block tables).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s37/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
for r in 1 2 3 4 5; do for ls in 1 0; do
  ATTNKIT_LOCKSTEP=$ls timeout 100 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode_lockstep${ls}_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode lockstep=$ls r$r rc=$? ${SECONDS}s" >> $S
done; save; done
cat $S
