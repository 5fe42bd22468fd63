#!/bin/bash
# s10 r3 (measure): split-count sweep at 1x32k (bf16 and fp8, 32/8 and 32/4, pages 16/64/128), two rounds.
cd "$(dirname "$0")/.." && R=$PWD
mkdir -p /tmp/b && tar xzf .devbin/bin.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
mkdir -p /tmp/o; SECONDS=0
for round in 1 2; do
  /tmp/b/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --out /tmp/o/h_$round.jsonl > /dev/null 2>&1
  for s in 8 12 16 20 24 28 32 40 48 64 96 128; do
    /tmp/b/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --splits $s --out /tmp/o/s${s}_$round.jsonl > /dev/null 2>&1
  done
  echo "round $round ${SECONDS}s"
done
python3 - <<'PY' > $OUT/s10r3_sweep.jsonl
import json, glob, os
for f in sorted(glob.glob('/tmp/o/*.jsonl')):
    tag = os.path.basename(f)[:-6]
    for l in open(f):
        r = json.loads(l); r['sweep'] = tag; print(json.dumps(r))
PY
wc -l $OUT/s10r3_sweep.jsonl
