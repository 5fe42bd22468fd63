#!/bin/bash
# Session 54, call 3 (the H200 that call 2 held): the kept build's decode suite, three rounds
# (session 53's kept kernels had run on an H100 only; the fp8 gain over bf16 per layer is #6's
# open row), side "A" for bench/results/cuda_s53_ab.py. Then ATTNKIT_CUDA_CHECK_ARGS=1 on the
# bench, whose layer loop captures a graph: the refusal shows the variable reaches the backend.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r
xz -dc .devbin/s54b/attnkit.xz > /tmp/x/attnkit && chmod +x /tmp/x/attnkit
export ATTNKIT_MODELS_DIR=$PWD/models
S=/tmp/r/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
for round in 1 2 3; do
  timeout 90 /tmp/x/attnkit bench --device cuda --suite decode --out /tmp/r/ab_A_$round.jsonl > /dev/null 2> /tmp/r/ab_A_$round.err
  echo "decode round $round rc=$? ${SECONDS}s" >> $S
done
timeout 60 env ATTNKIT_CUDA_CHECK_ARGS=1 /tmp/x/attnkit bench --device cuda --suite decode --quick > /tmp/r/checked_bench.txt 2>&1
echo "checked bench rc=$? $(grep -o 'a graph capture cannot hold[^;]*' /tmp/r/checked_bench.txt | head -1) ${SECONDS}s" >> $S
tar czf $OUT/call3.tgz -C /tmp/r .
cat $S
