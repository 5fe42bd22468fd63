#!/bin/bash
# s34 device run 5: the decode layer's fixed cost against the peers' (bench/peers_gpu.py's new
# --decode-grid: cuDNN and FlashAttention-2 through SDPA over contiguous bf16 K/V) at small
# contexts, with attnkit's rows (HEAD 160be28's binary, no source change since) in the same call.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s34/bin5.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r5.tgz -C $W . ; }
G=1x256,1x1024,1x4096,1x32768
timeout 200 python3 bench/peers_gpu.py --suite decode --decode-grid $G --out $W/peers.jsonl > /dev/null 2>> $W/err.txt
echo "peers rc=$? ${SECONDS}s" >> $S
save
timeout 100 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid $G --out $W/attnkit.jsonl > /dev/null 2>> $W/err.txt
echo "attnkit rc=$? ${SECONDS}s" >> $S
save
cat $S
