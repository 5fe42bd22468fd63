#!/bin/bash
# s39 device run 3 (CPU only): the final bench (L3 from sysfs, decode caches of at least
# 4 x L3 + 64 MB, the paired ceiling) on the H200 host's Intel cores: three decode suite runs
# over shuffled block tables; the host's cache sizes as sysfs, lscpu and glibc give them.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s39/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
{ lscpu | grep -E 'Model name|^CPU\(s\)|L3|L2'; for i in /sys/devices/system/cpu/cpu0/cache/index*; do echo "$i level $(cat $i/level) size $(cat $i/size) shared $(cat $i/shared_cpu_list)"; done; getconf LEVEL3_CACHE_SIZE; } > $W/host_cpu.txt
save() { cp $S $OUT/summary.txt; cp $W/*.jsonl $W/host_cpu.txt $OUT/ 2>/dev/null; }
for r in 1 2 3; do
  timeout 150 /tmp/z/attnkit bench --device cpu --suite decode --out $W/cpu_decode_final.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode r$r rc=$? ${SECONDS}s" >> $S; save
done
cat $S $W/host_cpu.txt
