#!/bin/bash
# s39 device run 1 (CPU only): the decode suite with the sequential ceiling read beside each row's
# calls (read_bw_paired_gbs, fraction_of_paired_bw; baf8f2e) on the H200 host's Intel cores, three
# runs over shuffled block tables and one over sequential ones.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s39/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
lscpu | grep -E 'Model name|^CPU\(s\)' > $W/host_cpu.txt
save() { cp $S $OUT/summary.txt; cp $W/*.jsonl $W/host_cpu.txt $OUT/ 2>/dev/null; }
for r in 1 2 3; do
  timeout 120 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode_paired.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode r$r rc=$? ${SECONDS}s" >> $S; save
done
timeout 120 /tmp/z/attnkit bench --device cpu --suite decode --sequential-blocks --out $W/cpu_decode_paired_sequential.jsonl > /dev/null 2>>$W/err.txt
echo "cpu decode sequential rc=$? ${SECONDS}s" >> $S; save
cat $S
