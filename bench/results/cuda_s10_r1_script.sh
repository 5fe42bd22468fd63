#!/bin/bash
# s10 r1 (measure): ncu full sections of the 16x8k decode kernel, 32/4 page 64: bf16 (row 4) and
# fp8 e4m3 (row 10) of `bench --decode-grid 16x8192` (rows: bf16 32/8 p16 p64 p128, bf16 32/4 ...,
# fp8 32/8 ..., fp8 32/4 ...), plus the plain bench rows of that grid.
cd "$(dirname "$0")/.." && R=$PWD
mkdir -p /tmp/b && tar xzf .devbin/bin.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
mkdir -p /tmp/o; SECONDS=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > /tmp/o/gpu.txt
/tmp/b/attnkit bench --device cuda --suite decode --decode-grid 16x8192 --out /tmp/o/s10r1_rows.jsonl > /dev/null 2>&1
echo "rows rc=$? ${SECONDS}s"
N=$((1+3+50+3+50+1+3+50))
for row in 4 10; do
  timeout 220 ncu --clock-control none --set full --import-source no --kernel-name regex:"flash_fwd" --launch-skip $(( row * N + 10 )) --launch-count 1 \
    -o /tmp/o/s10r1_row$row /tmp/b/attnkit bench --device cuda --suite decode --decode-grid 16x8192 > /tmp/o/ncu$row.log 2>&1
  echo "ncu row$row rc=$? ${SECONDS}s"
  ncu --import /tmp/o/s10r1_row$row.ncu-rep --page details --csv > /tmp/o/s10r1_row${row}_details.csv 2>&1
  grep -E '"(Function Name|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread|Grid Size|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler|Warp Cycles Per Issued Instruction|L2 Hit Rate|Executed Ipc Active|Executed Instructions|Theoretical Occupancy|Dynamic Shared Memory Per Block)"' /tmp/o/s10r1_row${row}_details.csv | awk -F'","' '{print $(NF-2)": "$NF}' | head -30
  ncu --import /tmp/o/s10r1_row$row.ncu-rep --page raw --csv --metrics "regex:smsp__average_warps?_issue_stalled_.*_per_issue_active.ratio" 2>/dev/null > /tmp/o/s10r1_stalls$row.csv
  ncu --import /tmp/o/s10r1_row$row.ncu-rep --page raw --csv --metrics "regex:sass_thread_inst_executed_op_.*_pred_on.sum|smsp__inst_executed.sum|launch__grid_size|sm__cycles_elapsed.avg" 2>/dev/null > /tmp/o/s10r1_inst$row.csv
  ncu --import /tmp/o/s10r1_row$row.ncu-rep --page source --csv --print-source sass > /tmp/o/s10r1_sass$row.csv 2>/dev/null; gzip -f /tmp/o/s10r1_sass$row.csv
done
cp /tmp/o/*.ncu-rep /tmp/o/*details.csv /tmp/o/s10r1_* /tmp/o/gpu.txt $OUT/ 2>/dev/null
ls -la $OUT
