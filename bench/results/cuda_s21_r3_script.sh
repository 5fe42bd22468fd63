#!/bin/bash
# s21 device run 3: items of <= 4 rows on the AMX host through the few-rows form (C) against AMX (A).
cd "$(dirname "$0")" && mkdir -p x && tar xJf bin.txz -C x && cd x
export LD_LIBRARY_PATH=$PWD/lib
S=$OUT/summary.txt
./attnkit_test_backends --gtest_filter='CpuFlash*:CpuReference*' > $OUT/cpu_tests.txt 2>&1; echo "cpu tests rc=$? $(tail -1 $OUT/cpu_tests.txt)" > $S
./attnkit_test_conformance --gtest_filter='*CPU_FLASH*' > $OUT/conf_default.txt 2>&1; echo "conformance rc=$? $(grep -E 'CPU_FLASH [0-9]+ cells checked' $OUT/conf_default.txt | head -1 | cut -c1-90)" >> $S
for i in 1 2; do for b in A C; do
  ./attnkit_$b bench --device cpu --suite decode 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
  r=json.loads(l); r['ab']='$b'; r['round']=$i; r['cores']=16; print(json.dumps(r))" >> $OUT/amx_few4_ab.jsonl
  taskset -c 0,1 ./attnkit_$b bench --device cpu --suite decode 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
  r=json.loads(l); r['ab']='$b'; r['round']=$i; r['cores']=2; print(json.dumps(r))" >> $OUT/amx_few4_ab.jsonl
  echo "round $i $b done" >> $S
done; done
cat $S
