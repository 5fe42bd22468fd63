#!/bin/bash
# Session 64, device call 4: do the decode figures hold over a cache larger than the batch? The
# bench's cache has held exactly the blocks a row reads (the most compact layout); a serving
# cache holds many more, the batch's pages scattered over them. The whole decode suite at pool 1
# and pool 4, alternating, two rounds; then 1x32k (32/4, 32/8) at pool 1 and pool 16, two rounds.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s64b/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
for r in 1 2; do for p in 1 4; do
  timeout 200 $B/attnkit bench --device cuda --suite decode --pool $p --out $OUT/suite_p${p}_r$r.jsonl > $OUT/suite_p${p}_r$r.log 2>&1
  echo "suite pool $p r$r rc=$? ${SECONDS}s" >> $S
done; done
for r in 1 2; do for p in 1 16; do
  timeout 60 $B/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --pool $p --out $OUT/l32k_p${p}_r$r.jsonl > $OUT/l32k_p${p}_r$r.log 2>&1
  echo "1x32k pool $p r$r rc=$? ${SECONDS}s" >> $S
done; done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log && rm -rf *.jsonl *.log
