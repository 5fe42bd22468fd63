#!/bin/bash
# s33 device run 2 (measure only; throwaway instrumentation, cuda_s33_r2_timeline.diff): per-CTA
# %globaltimer marks of the split decode form (CTA start, first tile ready, loop end, exit) at
# 1x32k and 16x8k, both GQAs, pages 16/64/128, bf16 and fp8, under the bench's single-call
# protocols (every 5th uncaptured call), then the same grid's rows without the marks.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s33/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
ATTNKIT_DBG_TIMES=1 timeout 280 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid 1x32768,16x8192 --out $W/rows_dbg.jsonl > /dev/null 2> $W/timeline.txt
echo "timeline rc=$? $(grep -c DBG $W/timeline.txt) lines ${SECONDS}s" >> $S
save
timeout 200 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid 1x32768,16x8192 --out $W/rows.jsonl > /dev/null 2> $W/err.txt
echo "rows rc=$? $(wc -l < $W/rows.jsonl) rows ${SECONDS}s" >> $S
save
cat $S
