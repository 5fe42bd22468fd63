#!/bin/bash
# s22 device run 1: the few-rows form's finer prefetch ticks (B) against the previous kernel (A)
# on the H200 host's CPU (AMX, 16 cores; and 2 of them); every test and the conformance suite on B.
cd "$(dirname "$0")" && mkdir -p x && tar xJf bin.txz -C x && cd x
export LD_LIBRARY_PATH=$PWD/lib
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader > $S
./attnkit_test_backends > $OUT/tests.txt 2>&1; echo "tests rc=$? $(grep -E '^\[  PASSED|FAILED' $OUT/tests.txt | head -3 | tr '\n' ' ')" >> $S
./attnkit_test_conformance > $OUT/conformance.txt 2>&1; echo "conformance rc=$?" >> $S; grep -E 'cells checked' $OUT/conformance.txt | cut -c1-150 >> $S
for i in 1 2; do for b in A B; do
  ./attnkit_$b bench --device cpu --suite decode 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
  r=json.loads(l); r['ab']='$b'; r['round']=$i; r['cores']=16; print(json.dumps(r))" >> $OUT/host_ticks_ab.jsonl
  taskset -c 0,1 ./attnkit_$b bench --device cpu --suite decode 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
  r=json.loads(l); r['ab']='$b'; r['round']=$i; r['cores']=2; print(json.dumps(r))" >> $OUT/host_ticks_ab.jsonl
  echo "round $i $b done $(date +%T)" >> $S
done; done
cat $S
