#!/bin/bash
# Session 69, device call 3 (call 2's warm H100; exactly as run, as one command): a second round of
# the decode suite and of v2's prefill at heads 64, 96, 128, 192/128 and 256, for the spread of
# call 2's bench step. .devbin/s68/bin.txz (not in git): HEAD's attnkit; sm_90a.
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models; [ -x /tmp/b/attnkit ] || { mkdir -p /tmp/b && tar xJf .devbin/s68/bin.txz -C /tmp/b; }; SECONDS=0; S=$OUT/summary.txt; nvidia-smi --query-gpu=name --format=csv,noheader > $S; timeout 120 /tmp/b/attnkit bench --device cuda --suite decode --out $OUT/decode_r2.jsonl > $OUT/decode_r2.log 2>&1; echo "decode r2 rc=$? ${SECONDS}s" >> $S; timeout $((230 - SECONDS)) /tmp/b/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 64,96,128,192/128,256 --out $OUT/prefill_v2_r2.jsonl > $OUT/prefill_v2_r2.log 2>&1; echo "prefill v2 r2 rc=$? ${SECONDS}s" >> $S; cd $OUT && tar czf all.tgz *.jsonl *.log; rm -f *.jsonl *.log; cat $S
