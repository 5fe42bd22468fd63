#!/bin/bash
# NOT RUN: session 48 got no device (two calls refused). Written for the change in
# cuda_s48_heads160_224_unverified.patch (git apply it, build the cuda preset, pack attnkit,
# attnkit_test_backends and attnkit_test_conformance stripped with libfmt.so.9* under lib/ as
# .devbin/s48/bin1.txz, carry .devbin/s48); land the patch only once this run passes.
# CUDA_FLASH with heads 160 and 224 (Zamba2's) in the manifest. The CudaFlash /
# CudaMla GPU tests (new: Heads160And224; EveryManifestHeadPair now covers both), the conformance
# cells (every declared cell, 160 and 224 included), memcheck / racecheck / synccheck / initcheck
# on the new test, verified runs of Zamba2-shaped configs (1.2B d128, 2.7B d160, 7B d224; every
# layer a Mamba2 mixer, the hybrid layers' shared attention at scale (head / 2)^-0.5) over the
# model dtype's cache and fp8, a pooled decoder (a Sentence Transformers folder over a float32
# checkpoint: float16, no decode), then prefill and decode rows at heads 160 and 224 beside the
# peers (cuDNN, FA2) in the same call.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b /tmp/c /tmp/st
tar xJf .devbin/s48/bin1.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt R=$OUT/runs.txt Z=$OUT/sanitizer.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 240 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*' > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|FAILED  \]' $OUT/cuda_tests.txt | head -8 | tr '\n' ';') $(grep -c '^\[       OK' $OUT/cuda_tests.txt) ok ${SECONDS}s" >> $S
timeout 150 /tmp/b/attnkit_test_conformance --gtest_filter='*CUDA*' > $OUT/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:.*cells|^\[  PASSED|^\[  FAILED' $OUT/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck synccheck initcheck; do
  echo "== $tool" >> $Z
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Heads160And224' >> $Z 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $Z | tail -1) ${SECONDS}s" >> $S
done
z2() { # name hidden heads layers n_mamba_heads mem_blocks
  echo "{\"architectures\":[\"Zamba2ForCausalLM\"],\"model_type\":\"zamba2\",\"hidden_size\":$2,\"num_attention_heads\":$3,\"num_hidden_layers\":$4,\"n_mamba_heads\":$5,\"mamba_d_state\":64,\"mamba_d_conv\":4,\"mamba_expand\":2,\"mamba_ngroups\":1,\"num_mem_blocks\":$6,\"use_mem_rope\":true,\"max_position_embeddings\":4096,\"torch_dtype\":\"bfloat16\"}" > /tmp/c/$1.json
}
z2 zamba2-1.2b 2048 32 38 64 1
z2 zamba2-2.7b 2560 32 54 80 2
z2 zamba2-7b 3584 32 81 112 2
# 1.2B's and 7B's block types: a hybrid layer every sixth, as 2.7B's default list places them.
python3 - <<'P'
import json
for n, L in (("zamba2-1.2b", 38), ("zamba2-7b", 81)):
    c = json.load(open(f"/tmp/c/{n}.json"))
    c["layers_block_type"] = ["hybrid" if i % 6 == 5 else "mamba" for i in range(L)]
    json.dump(c, open(f"/tmp/c/{n}.json", "w"))
P
echo '{"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","hidden_size":1024,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"num_hidden_layers":28,"max_position_embeddings":32768,"torch_dtype":"float32"}' > /tmp/st/config.json
echo '[]' > /tmp/st/modules.json
for m in zamba2-1.2b zamba2-2.7b zamba2-7b; do
  for kv in auto fp8; do
    echo "==== $m $kv" >> $R
    timeout 120 /tmp/b/attnkit run --model /tmp/c/$m.json --device cuda --requests 8 --prompt-len 300 --decode-steps 8 --kv-cache-dtype $kv --verify >> $R 2>&1
    echo "run ${m}_$kv rc=$? ${SECONDS}s" >> $S
  done
done
echo "==== sentence-transformers folder (float32 qwen3)" >> $R
timeout 120 /tmp/b/attnkit run --model /tmp/st/config.json --device cuda --requests 8 --prompt-len 500 --verify >> $R 2>&1
echo "run st_pooling rc=$? ${SECONDS}s" >> $S
grep -E '^==== |^model |verification|pooling model|block size' $R >> $S
for kv in bfloat16 fp8_e4m3; do
  timeout 120 /tmp/b/attnkit bench --device cuda --suite prefill --prefill-heads 128,160,224 --prefill-kv $kv --out /tmp/w_$kv.jsonl > /dev/null 2>> $OUT/bench_err.txt
  echo "bench prefill $kv rc=$? ${SECONDS}s" >> $S
done
for d in 160 224; do
  timeout 120 /tmp/b/attnkit bench --device cuda --suite decode --decode-head $d --decode-heads 32/32,32/8 --decode-grid 1x4096,16x4096,64x2048 --out /tmp/w_dec$d.jsonl > /dev/null 2>> $OUT/bench_err.txt
  echo "bench decode d$d rc=$? ${SECONDS}s" >> $S
done
cat /tmp/w_*.jsonl > $OUT/attnkit_bench.jsonl
timeout 120 python3 bench/peers_gpu.py --suite prefill --prefill-heads 128,160,224 --out /tmp/p1.jsonl > /dev/null 2>> $OUT/bench_err.txt
echo "peers prefill rc=$? ${SECONDS}s" >> $S
for d in 160 224; do
  timeout 90 python3 bench/peers_gpu.py --suite decode --decode-head $d --decode-heads 32/32,32/8 --decode-grid 1x4096,16x4096,64x2048 --out /tmp/p_dec$d.jsonl > /dev/null 2>> $OUT/bench_err.txt
  echo "peers decode d$d rc=$? ${SECONDS}s" >> $S
done
cat /tmp/p*.jsonl > $OUT/peers.jsonl
cat $S
