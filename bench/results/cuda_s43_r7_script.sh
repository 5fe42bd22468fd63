#!/bin/bash
# s43 device run 7: a control for runs 3 and 5, where every B was 2-3% slower than A at the fp8
# 1x32k decode rows. B0 is this session's tree with 7c64beb's CUDA sources (no chunk in the
# kernels), built as B3 was; if B0 is as slow as B3, the gap is not the chunk's code. The decode
# grid A B0 B3 B3 B0 A, then the SASS of the fp8 decode kernel (e4m3, head 128) in all three.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s43/bin7.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r7.tgz -C $W . ; }
for v in A B0 B B B0 A; do
  n=$(ls $W/decode_${v}_r*.jsonl 2>/dev/null | wc -l); r=$((n + 1))
  timeout 90 /tmp/z/attnkit_$v bench --device cuda --suite decode --out $W/decode_${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
  echo "decode $v r$r rc=$? ${SECONDS}s" >> $S
  save
done
K=_ZN7attnkit10cuda_flash16flash_fwd_kernelILi128ELi128E13__nv_bfloat16Lb1ELb1ELi1ELb0ELb0EEEvNS0_11FlashParamsE
for v in A B0 B; do
  cuobjdump -sass -arch sm_90a -fun $K /tmp/z/attnkit_$v > $W/sass_fp8_decode_$v.txt 2>&1
  echo "sass $v: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' $W/sass_fp8_decode_$v.txt) instructions" >> $S
done
save
cat $S
