#!/bin/bash
# s34 device run 4 (HEAD 160be28's binary): what a decode layer's fixed cost is made of. Decode
# rows at small to 1x32k contexts, with the split heuristic and with one split (no combine
# kernel), with and without programmatic dependent launch (ATTNKIT_CUDA_PDL=0).
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s34/bin4.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r4.tgz -C $W . ; }
G=1x256,1x1024,1x4096,1x32768
for pdl in 1 0; do
  ATTNKIT_CUDA_PDL=$pdl timeout 100 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid $G --out $W/heur_pdl$pdl.jsonl > /dev/null 2>> $W/err.txt
  echo "heuristic pdl=$pdl rc=$? ${SECONDS}s" >> $S
  ATTNKIT_CUDA_PDL=$pdl timeout 100 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid 1x256,1x1024 --splits 1 --out $W/one_split_pdl$pdl.jsonl > /dev/null 2>> $W/err.txt
  echo "one split pdl=$pdl rc=$? ${SECONDS}s" >> $S
  save
done
cat $S
