#!/bin/bash
# Session 71, device call 3: calls 1 and 2 again in one command, but only on an H200 (the kept
# tree's suites and the fp8 / bf16 decode rows have not run on one since session 66); on any other
# card it stops at once. Outputs under $OUT/c1 and $OUT/c2.
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$name"
[[ $name == *H200* ]] || { echo "not an H200: stopped"; exit 0; }
d=$(dirname "$0")
mkdir -p $OUT/c1 $OUT/c2
OUT=$OUT/c1 CAP=440 bash $d/cuda_2026-12-07_s71_call1.sh
OUT=$OUT/c2 CAP=140 bash $d/cuda_2026-12-07_s71_call2.sh
