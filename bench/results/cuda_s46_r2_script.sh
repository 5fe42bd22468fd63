#!/bin/bash
# s46 device run 2: the fp8 decode form's shared-memory floor chosen per launch (tiles.hpp
# fp8_decode_floor: kept unless the grid overflows two CTAs per SM and fills its last wave at the
# kernel's own occupancy to 80%). A = session 45's build (the floor at every launch), B = this
# tree's. Run 1's decode sets alternating A and B, two rounds; the peers at the same shapes; B's
# new occupancy test, every CudaFlash / CudaMla GPU test, the conformance cells, the runtime tests
# and verified Whisper-shaped runs.
cd "$(dirname "$0")/../.." && rm -rf /tmp/a /tmp/b && mkdir -p /tmp/a /tmp/b
tar xJf .devbin/s45/bin3.txz -C /tmp/a && tar xJf .devbin/s46/bin2.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader >> $S
timeout 120 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Fp8DecodeFormOccupancyByGrid:CudaFlashHost.*' > $W/occupancy_test.txt 2>&1
echo "occupancy test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $W/occupancy_test.txt | tr '\n' ';') ${SECONDS}s" >> $S
W1="--decode-heads 20/20 --decode-head 64 --decode-grid 16x1500,64x1500,256x1500"
G1="--decode-heads 32/8 --decode-head 64 --decode-grid 1x32768,16x8192,64x4096,256x2048"
P1="--decode-heads 32/32 --decode-head 96 --decode-grid 1x32768,16x8192,64x4096"
E1="--decode-heads 32/32 --decode-head 80 --decode-grid 16x8192,64x4096"
H1="--decode-heads 32/8 --decode-head 128 --decode-grid 1x32768,64x4096"
for round in 1 2; do
  for set in W1 G1 P1 E1 H1; do
    for bin in a b; do
      o=$W/attnkit_${set}_${bin}_r$round
      LD_LIBRARY_PATH=/tmp/$bin/lib timeout 90 /tmp/$bin/attnkit bench --device cuda --suite decode ${!set} --out $o.jsonl > /dev/null 2> $o.err
      echo "attnkit $set $bin round $round rc=$? rows $(wc -l < $o.jsonl) ${SECONDS}s" >> $S
    done
  done
  save
done
for set in W1 G1 P1 E1; do
  timeout 60 python3 bench/peers_gpu.py --suite decode ${!set} --out $W/peers_$set.jsonl > /dev/null 2> $W/peers_$set.err
  echo "peers $set rc=$? rows $(wc -l < $W/peers_$set.jsonl) ${SECONDS}s" >> $S
done
save
timeout 120 /tmp/b/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
timeout 100 /tmp/b/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $W/runtime_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
save
C=$W/cfg && mkdir -p $C
cat > $C/whisper-large-v3-shape.json <<'CFG'
{"model_type":"whisper","d_model":1280,"encoder_layers":32,"decoder_layers":32,
 "encoder_attention_heads":20,"decoder_attention_heads":20,"max_source_positions":1500,
 "max_target_positions":448,"is_encoder_decoder":true,"torch_dtype":"float16"}
CFG
for kv in fp8 auto; do
  timeout 40 /tmp/b/attnkit run --device cuda --verify --quiet --model $C/whisper-large-v3-shape.json --kv-cache-dtype $kv --requests 32 --prompt-len 1500 --decode-steps 16 --max-tokens-per-step 6000 >> $W/run.log 2>&1
  echo "run whisper $kv rc=$? ${SECONDS}s" >> $S
done
timeout 40 /tmp/b/attnkit run --device cuda --verify --quiet --model llama-3.2-1b --kv-cache-dtype fp8 --requests 64 --prompt-len 300 --decode-steps 8 >> $W/run.log 2>&1
echo "run llama-3.2-1b fp8 rc=$? ${SECONDS}s" >> $S
grep -E "verification|verified" $W/run.log | cut -c1-240 >> $S
save
timeout $((590 - SECONDS)) /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran|FAILED  \]' $W/cuda_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
