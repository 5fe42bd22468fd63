#!/bin/bash
# Session 58, call 1: main at e6f5ff8 (CPU build; sm_90a build of the same sources for the CLI).
# The bench's new read ceiling (8df7f70: four ways of reading, the fastest kept) on the host's
# cores, two decode-suite runs with the GPU idle, to see whether any way reads faster than the plain
# loop there (sessions 39 and 57: the decode rows read up to 1.43x the plain ceiling). Then the GPU:
# the default model verified, and the #6 decode rows at 1x32k and 16x8k, GQA 32/4, beside the peers.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r /tmp/c && mkdir -p /tmp/x /tmp/r /tmp/c
xz -dc .devbin/s58/attnkit.xz > /tmp/x/attnkit && chmod +x /tmp/x/attnkit
tar xJf .devbin/s58cpu/bin.txz -C /tmp/c
export ATTNKIT_MODELS_DIR=$PWD/models PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/tmp/c/lib
S=/tmp/r/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
lscpu | grep -E 'Model name|^CPU\(s\)|L3' >> $S
for i in 1 2; do
  timeout 150 /tmp/c/attnkit bench --device cpu --suite decode --out /tmp/r/cpu_decode_run$i.jsonl > /dev/null 2> /tmp/r/cpu_decode_run$i.err
  echo "cpu decode run $i rc=$? ${SECONDS}s" >> $S
done
timeout 90 /tmp/x/attnkit run --device cuda --verify > /tmp/r/run_default.txt 2>&1
echo "run --device cuda --verify rc=$? $(grep -i 'verif' /tmp/r/run_default.txt | tail -1 | cut -c1-150) ${SECONDS}s" >> $S
timeout 150 /tmp/x/attnkit bench --device cuda --suite decode --decode-grid 1x32768,16x8192 --decode-heads 32/4 --out /tmp/r/cuda_decode.jsonl > /dev/null 2> /tmp/r/cuda_decode.err
echo "cuda decode rc=$? ${SECONDS}s" >> $S
timeout 150 python3 bench/peers_gpu.py --out /tmp/r/peers_decode.jsonl --suite decode --decode-grid 1x32768,16x8192 --decode-heads 32/4 > /tmp/r/peers_decode.txt 2>&1
echo "peers decode rc=$? ${SECONDS}s" >> $S
tar czf $OUT/call1.tgz -C /tmp/r . && cp $S $OUT/summary.txt && cat $S
