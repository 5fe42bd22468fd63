#!/bin/bash
# s15 r1: session 14's last commit (605e21a) on the H200: the CUDA GPU tests, then ncu full
# sections + SASS samples of v3's Hopper prefill kernel at head 64 and head 128, S = 4k, non-causal.
# Each prefill row launches it 24 times (check, 3 warm-ups, 20 timed); the first Hopper row is head
# 64 at 4k, so flash_hopper launch 5 is that row's 2nd timed run and launch 149 (6 rows later) head
# 128 at 4k's.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s15/binA.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $OUT/gpu.txt
timeout 60 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.HopperPrefillForm' > $OUT/hopper_test.log 2>&1; rc=$?; echo "hopper test rc=$rc ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/hopper_test.log | head
[ $rc = 124 ] && exit 1
timeout 200 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$? $(tail -2 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/tests.log | head -20
for spec in "d64:5" "d128:149"; do
  name=${spec%%:*}; skip=${spec##*:}
  timeout 200 ncu --clock-control none --set full --import-source no --kernel-name regex:"flash_hopper" --launch-skip $skip --launch-count 1 \
    -o /tmp/ncu_$name /tmp/b/attnkit bench --device cuda --suite prefill --variant v3 > /tmp/ncu_$name.log 2>&1
  echo "ncu $name rc=$? ${SECONDS}s"; grep -E "Profiling" /tmp/ncu_$name.log | head -2
  ncu --import /tmp/ncu_$name.ncu-rep --page details --csv > $OUT/ncu_${name}_details.csv 2>&1
  grep -E '"(Function Name|Duration|Registers Per Thread|Grid Size|Issue Slots Busy|No Eligible|Warp Cycles Per Issued Instruction|Executed Ipc Active|Executed Instructions|L2 Hit Rate|Memory Throughput|Compute \(SM\) Throughput)"' $OUT/ncu_${name}_details.csv | awk -F'","' '{print $(NF-2)": "$NF}' | head -20
  ncu --import /tmp/ncu_$name.ncu-rep --page raw --csv --metrics "regex:smsp__average_warps?_issue_stalled_.*_per_issue_active.ratio|regex:sm__pipe_.*cycles_active.avg.pct_of_peak_sustained_active|regex:sm__inst_executed_pipe_.*sum|smsp__inst_executed.sum|sm__cycles_elapsed.avg" > $OUT/ncu_${name}_raw.csv 2>/dev/null
  python3 - $OUT/ncu_${name}_raw.csv <<'PY'
import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h,u,v=rows[0],rows[1],rows[2]
for n,x in zip(h,v):
    if ('pipe_' in n and 'pct' in n) or 'stalled' in n or n in ('smsp__inst_executed.sum','sm__cycles_elapsed.avg'):
        try:
            if float(x.replace(',',''))>0.05: print(n, x)
        except: pass
PY
  ncu --import /tmp/ncu_$name.ncu-rep --page source --csv --print-source sass > $OUT/ncu_${name}_sass.csv 2>/dev/null; gzip -f $OUT/ncu_${name}_sass.csv
done
ls $OUT
