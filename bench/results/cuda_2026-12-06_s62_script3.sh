#!/bin/bash
# Session 62, device call 3: where v2's instructions go at heads 96 and 192 (1k non-causal, the
# first launch), against FA2's: ncu full set of both kernels (details as CSV, with the executed
# instructions per opcode), and attnkit's SASS source counters. Binaries: call 1's build (d62fdee).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s62/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for h in 96 192; do
  timeout 120 ncu --set full --import-source no --kernel-name regex:flash_fwd_kernel --launch-count 1 -o /tmp/ak_$h $B/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads $h --out /tmp/x.jsonl > /tmp/ak_$h.log 2>&1
  echo "ncu attnkit $h rc=$? ${SECONDS}s" >> $S
  ncu --import /tmp/ak_$h.ncu-rep --page details --csv > $OUT/ak_${h}_details.csv 2>&1
  ncu --import /tmp/ak_$h.ncu-rep --page raw --csv > $OUT/ak_${h}_raw.csv 2>&1
  ncu --import /tmp/ak_$h.ncu-rep --page source --csv --print-source sass > $OUT/ak_${h}_sass.csv 2>&1
  timeout 150 ncu --set full --import-source no --kernel-name regex:flash_fwd_kernel --launch-count 1 -o /tmp/fa_$h python3 bench/peers_gpu.py --suite prefill --prefill-heads $h --out /tmp/y.jsonl > /tmp/fa_$h.log 2>&1
  echo "ncu fa2 $h rc=$? ${SECONDS}s" >> $S
  ncu --import /tmp/fa_$h.ncu-rep --page details --csv > $OUT/fa_${h}_details.csv 2>&1
  ncu --import /tmp/fa_$h.ncu-rep --page raw --csv > $OUT/fa_${h}_raw.csv 2>&1
  ncu --import /tmp/fa_$h.ncu-rep --page source --csv --print-source sass > $OUT/fa_${h}_sass.csv 2>&1
done
cd $OUT && tar czf all.tgz *.csv && rm -f *.csv
