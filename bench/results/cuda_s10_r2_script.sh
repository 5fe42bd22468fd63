#!/bin/bash
# s10 r2 (measure): stall reasons and per-instruction SASS samples of the 16x8k 32/4 page-64 decode
# kernels (bf16 row 4, fp8 row 10 of `bench --decode-grid 16x8192`), one tarball out.
cd "$(dirname "$0")/.." && R=$PWD
mkdir -p /tmp/b && tar xzf .devbin/bin.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
mkdir -p /tmp/o/r2; SECONDS=0
N=$((1+3+50+3+50+1+3+50))
for row in 4 10; do
  timeout 220 ncu --clock-control none --section WarpStateStats --section SourceCounters --section InstructionStats --kernel-name regex:"flash_fwd" --launch-skip $(( row * N + 10 )) --launch-count 1 \
    -o /tmp/o/r2/row$row /tmp/b/attnkit bench --device cuda --suite decode --decode-grid 16x8192 > /tmp/o/r2/ncu$row.log 2>&1
  echo "ncu row$row rc=$? ${SECONDS}s"
  ncu --import /tmp/o/r2/row$row.ncu-rep --page raw --csv --metrics "regex:smsp__average_warps?_issue_stalled_.*_per_issue_active.ratio" > /tmp/o/r2/stalls$row.csv 2>&1
  ncu --import /tmp/o/r2/row$row.ncu-rep --page source --csv --print-source sass > /tmp/o/r2/sass$row.csv 2>&1
  head -c 300 /tmp/o/r2/sass$row.csv; echo
done
tar czf $OUT/s10r2.tgz -C /tmp/o/r2 stalls4.csv stalls10.csv sass4.csv sass10.csv ncu4.log ncu10.log
ls -la $OUT
