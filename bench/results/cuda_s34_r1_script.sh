#!/bin/bash
# s34 device run 1: the fp8 decode form with the keys as the MMAs' rows (S^T = K Q^T, O^T = V^T P^T;
# B) against HEAD 160be28 (A): B's verified CUDA runs over fp8 e4m3 caches (default model,
# gemma-2-9b, gpt-oss-20b), SASS counts of both head-128 fp8 decode kernels, then the decode grid
# A B A B. (B's tests run in run 2: the tree and binaries must stay under 64 MiB.)
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s34/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $W/gpu.txt 2>&1
for m in "" "--model gemma-2-9b --requests 4 --prompt-len 300 --decode-steps 8" "--model gpt-oss-20b --requests 2 --prompt-len 200"; do
  timeout 90 /tmp/z/attnkit run --device cuda --verify --kv-cache-dtype fp8_e4m3 $m >> $W/runs_cuda_fp8.log 2>&1
  echo "run cuda fp8 [$m] rc=$? $(grep -c 'verification: OK' $W/runs_cuda_fp8.log) verified so far ${SECONDS}s" >> $S
done
save
for v in A B; do
  bin=/tmp/z/attnkit; [ $v = A ] && bin=/tmp/z/attnkit_A
  cuobjdump -arch sm_90a -sass -fun _ZN7attnkit10cuda_flash16flash_fwd_kernelILi128ELi128E13__nv_bfloat16Lb1ELb1ELi1ELb0ELb0EEEvNS0_11FlashParamsE $bin 2>> $W/err.txt | awk -v v=$v '/Function : /{f=$3} f ~ /flash_fwd_kernelILi128ELi128E13__nv_bfloat16Lb1ELb1ELi1ELb0/ && /\/\*[0-9a-f]+\*\//{n[f]++; split($0,a,/\*\/ +/); split(a[2],b,/[ .;]/); op=b[1]; if(op ~ /^@/) {split(a[2],b,/[ .;]+/); op=b[2]}; c[f" "op]++} END{for(k in n) print v, k, "instructions", n[k], "HMMA", c[k" HMMA"]+0, "F2FP", c[k" F2FP"]+0, "MOVM", c[k" MOVM"]+0, "MUFU", c[k" MUFU"]+0, "SHFL", c[k" SHFL"]+0, "PRMT", c[k" PRMT"]+0}' >> $W/sass_counts.txt
done
echo "sass $(wc -l < $W/sass_counts.txt) lines ${SECONDS}s" >> $S
for r in 1 2; do
  for v in A B; do
    bin=/tmp/z/attnkit; [ $v = A ] && bin=/tmp/z/attnkit_A
    timeout 120 $bin bench --device cuda --suite decode --out $W/${v}_r$r.jsonl > /dev/null 2>> $W/err.txt
    echo "$v r$r rc=$? ${SECONDS}s" >> $S
    save
  done
done
save
cat $S
