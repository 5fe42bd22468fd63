#!/bin/bash
# Session 62, device call 2: why v2 trails FA2 at head 96 (S = 1k) and 192 (1k, 16k non-causal):
# ncu launch statistics and occupancy (registers, CTAs per SM, waves) of attnkit's v2 prefill
# kernel and PyTorch's FA2 kernel at heads 96 and 192, 1k non-causal (the first launch of each
# run), plus v2's prefill rows at 96 beside the peers. Binaries: call 1's build (d62fdee).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s62/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
SEC="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section SchedulerStats"
for h in 96 192; do
  timeout 90 ncu --kernel-name regex:flash_fwd_kernel --launch-count 1 $SEC $B/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads $h --out /tmp/x.jsonl > $OUT/ncu_attnkit_$h.txt 2>&1
  echo "ncu attnkit $h rc=$? ${SECONDS}s" >> $S
  timeout 120 ncu --kernel-name regex:flash_fwd_kernel --launch-count 1 $SEC python3 bench/peers_gpu.py --suite prefill --prefill-heads $h --out /tmp/y.jsonl > $OUT/ncu_fa2_$h.txt 2>&1
  echo "ncu fa2 $h rc=$? ${SECONDS}s" >> $S
done
timeout 60 $B/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 96 --out $OUT/prefill_v2_96.jsonl > $OUT/prefill_v2_96.log 2>&1
echo "bench v2 96 rc=$? ${SECONDS}s" >> $S
timeout 60 python3 bench/peers_gpu.py --suite prefill --prefill-heads 96 --out $OUT/peers_96.jsonl > $OUT/peers_96.log 2>&1
echo "peers 96 rc=$? ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -f *.jsonl *.log ncu_*.txt
