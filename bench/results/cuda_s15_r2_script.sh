#!/bin/bash
# s15 r2: A = 605e21a (v3c), B = A + FA3's intra-warpgroup overlap in the Hopper consumers (S of
# tile t + 1 issued before P V of tile t, its softmax under that P V, O rescaled before the next
# P V), C = B + wgmma descriptors advanced by one add (GmmaDesc; also CUDA_MLA's Hopper form).
# C's CUDA GPU tests, then the prefill suite under v3 for A, B, C alternating, two rounds; the MLA
# quick suite for A and C; ncu of C's head-64 and head-128 4k kernels (as r1).
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s15/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib

cp /tmp/b/attnkit /tmp/b/attnkit_C
SECONDS=0
timeout 60 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/hopper_test.log | head
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
for round in 1 2; do for v in A B C; do
  timeout 100 /tmp/b/attnkit_$v bench --device cuda --suite prefill --variant v3 --out /tmp/p.jsonl > /dev/null 2>&1; echo "bench $v round $round rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build='$v', round=$round))) for l in open('/tmp/p.jsonl')]" >> $OUT/bench_prefill_abc.jsonl
done; done
for v in A C; do
  timeout 100 /tmp/b/attnkit_$v bench --device cuda --suite mla --quick --out /tmp/m.jsonl > /dev/null 2>&1; echo "mla $v rc=$? ${SECONDS}s"
  python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), build='$v'))) for l in open('/tmp/m.jsonl')]" >> $OUT/bench_mla_ac.jsonl
done
python3 - $OUT/bench_prefill_abc.jsonl $OUT/bench_mla_ac.jsonl <<'PY'
import json,sys
t={}
for f in sys.argv[1:]:
  for l in open(f):
    r=json.loads(l)
    if r.get('kind') not in ('prefill','mla_decode'): continue
    k=(r['kind'],r.get('head_dim'),r.get('seq_q'),r.get('seq_k'),r.get('batch'),r.get('heads_q'),r.get('kv_dtype'),r.get('causal'))
    t.setdefault(k,{}).setdefault(r['build'],[]).append(round(r['TFLOPs'] if r['kind']=='prefill' else r['GBps'],1))
for k in sorted(t, key=str): print(k, t[k])
PY
for spec in "d64:5" "d128:149"; do
  name=${spec%%:*}; skip=${spec##*:}
  timeout 150 ncu --clock-control none --set full --import-source no --kernel-name regex:"flash_hopper" --launch-skip $skip --launch-count 1 \
    -o /tmp/ncu_$name /tmp/b/attnkit_C bench --device cuda --suite prefill --variant v3 > /tmp/ncu_$name.log 2>&1
  echo "ncu $name rc=$? ${SECONDS}s"
  ncu --import /tmp/ncu_$name.ncu-rep --page details --csv > /tmp/ncu_${name}_details.csv 2>&1
  grep -E '"(Duration|Issue Slots Busy|Executed Instructions|Warp Cycles Per Issued Instruction)"' /tmp/ncu_${name}_details.csv | awk -F'","' '{print $(NF-2)": "$NF}' | head
  grep -i "highest-utilized" /tmp/ncu_${name}_details.csv | head -1 | cut -c1-120
  ncu --import /tmp/ncu_$name.ncu-rep --page source --csv --print-source sass > $OUT/ncu_C_${name}_sass.csv 2>/dev/null; gzip -f $OUT/ncu_C_${name}_sass.csv
done
ls $OUT
