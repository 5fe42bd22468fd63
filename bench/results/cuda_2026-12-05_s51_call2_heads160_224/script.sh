#!/bin/bash
# Session 51, call 2: HEAD + session 48's heads-160/224 patch (binB; the write_kv fuzz too). In
# order of need, each step only while time is left (LIMIT seconds, default 540): the GPU tests A's
# call did not reach plus Heads160And224 and EveryManifestHeadPair, the CUDA conformance cells and
# fuzz (160/224 now drawn), the write_kv fuzz, Zamba2-shaped verified runs, memcheck and racecheck
# on the new test, prefill/decode rows at 160/224 beside the peers, synccheck and initcheck.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b /tmp/c
tar xJf .devbin/s51/binB.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt R=$OUT/runs.txt Z=$OUT/sanitizer.txt SECONDS=0 LIMIT=${LIMIT:-540}
t() { local want=$1; shift; local left=$((LIMIT - SECONDS)); [ $left -lt 15 ] && { echo "skipped (time): $*" >> $S; return 99; }; timeout $((left < want ? left : want)) "$@"; }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
t 60 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Heads160And224:CudaFlash.EveryManifestHeadPair*' > $OUT/cuda_tests_new.txt 2>&1
echo "new cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $OUT/cuda_tests_new.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
t 60 /tmp/b/attnkit_test_conformance --gtest_filter='*CUDA*:-*Fuzz*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E '^conformance: CUDA_FLASH |^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
for be in CUDA_FLASH:500 CUDA_FLASH_v2:250 CUDA_MLA:150; do
  ATTNKIT_FUZZ_VERBOSE=1 ATTNKIT_FUZZ_SEED=51003 ATTNKIT_FUZZ_CASES=${be#*:} t 50 /tmp/b/attnkit_test_conformance \
    --gtest_filter="*Fuzz.RandomLayers*/${be%:*}" >> $OUT/fuzz.txt 2>&1
  echo "fuzz ${be%:*} rc=$? $(grep -E '^fuzz:' $OUT/fuzz.txt | tail -1 | cut -c1-200) ${SECONDS}s" >> $S
done
for be in CUDA_FLASH:500 CUDA_MLA:200; do
  ATTNKIT_FUZZ_SEED=51004 ATTNKIT_FUZZ_CASES=${be#*:} t 40 /tmp/b/attnkit_test_conformance \
    --gtest_filter="*Fuzz.WriteKv*/${be%:*}" >> $OUT/fuzz_write_kv.txt 2>&1
  echo "fuzz write_kv ${be%:*} rc=$? $(grep -E '^fuzz:' $OUT/fuzz_write_kv.txt | tail -1 | cut -c1-200) ${SECONDS}s" >> $S
done
z2() { # name hidden heads layers n_mamba_heads mem_blocks
  echo "{\"architectures\":[\"Zamba2ForCausalLM\"],\"model_type\":\"zamba2\",\"hidden_size\":$2,\"num_attention_heads\":$3,\"num_hidden_layers\":$4,\"n_mamba_heads\":$5,\"mamba_d_state\":64,\"mamba_d_conv\":4,\"mamba_expand\":2,\"mamba_ngroups\":1,\"num_mem_blocks\":$6,\"use_mem_rope\":true,\"max_position_embeddings\":4096,\"torch_dtype\":\"bfloat16\"}" > /tmp/c/$1.json
}
z2 zamba2-2.7b 2560 32 54 80 2
z2 zamba2-7b 3584 32 81 112 2
python3 - <<'P'
import json
c = json.load(open("/tmp/c/zamba2-7b.json"))
c["layers_block_type"] = ["hybrid" if i % 6 == 5 else "mamba" for i in range(81)]
json.dump(c, open("/tmp/c/zamba2-7b.json", "w"))
P
for m in zamba2-2.7b zamba2-7b; do
  for kv in auto fp8; do
    echo "==== $m $kv" >> $R
    t 30 /tmp/b/attnkit run --model /tmp/c/$m.json --device cuda --requests 8 --prompt-len 300 --decode-steps 8 --kv-cache-dtype $kv --verify >> $R 2>&1
    echo "run ${m}_$kv rc=$? ${SECONDS}s" >> $S
  done
done
grep -E '^==== |^model |verification|block size|backend' $R >> $S
for tool in memcheck racecheck; do
  echo "== $tool" >> $Z
  t 70 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Heads160And224' >> $Z 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $Z | tail -1) ${SECONDS}s" >> $S
done
for kv in bfloat16 fp8_e4m3; do
  t 40 /tmp/b/attnkit bench --device cuda --suite prefill --prefill-heads 128,160,224 --prefill-kv $kv --out /tmp/w_$kv.jsonl > /dev/null 2>> $OUT/bench_err.txt
  echo "bench prefill $kv rc=$? ${SECONDS}s" >> $S
done
t 50 python3 bench/peers_gpu.py --suite prefill --prefill-heads 128,160,224 --out /tmp/p1.jsonl > /dev/null 2>> $OUT/bench_err.txt
echo "peers prefill rc=$? ${SECONDS}s" >> $S
for d in 160 224; do
  t 30 /tmp/b/attnkit bench --device cuda --suite decode --decode-head $d --decode-heads 32/32 --decode-grid 1x4096,16x4096,64x2048 --out /tmp/w_dec$d.jsonl > /dev/null 2>> $OUT/bench_err.txt
  echo "bench decode d$d rc=$? ${SECONDS}s" >> $S
  t 30 python3 bench/peers_gpu.py --suite decode --decode-head $d --decode-heads 32/32 --decode-grid 1x4096,16x4096,64x2048 --out /tmp/p_dec$d.jsonl > /dev/null 2>> $OUT/bench_err.txt
  echo "peers decode d$d rc=$? ${SECONDS}s" >> $S
done
cat /tmp/w_*.jsonl > $OUT/attnkit_bench.jsonl 2>/dev/null
cat /tmp/p*.jsonl > $OUT/peers.jsonl 2>/dev/null
t 150 /tmp/b/attnkit_test_backends --gtest_filter="$(cat .devbin/s51/filterB.txt)" > $OUT/cuda_tests.txt 2>&1
echo "rest of the cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $OUT/cuda_tests.txt | head -8 | tr '\n' ';') $(grep -c '^\[       OK' $OUT/cuda_tests.txt) ok ${SECONDS}s" >> $S
for tool in synccheck initcheck; do
  echo "== $tool" >> $Z
  t 70 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Heads160And224' >> $Z 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $Z | tail -1) ${SECONDS}s" >> $S
done
gzip $OUT/fuzz.txt
cat $S
