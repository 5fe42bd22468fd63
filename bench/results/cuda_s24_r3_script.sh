#!/bin/bash
# s24 device run 3: the session's final build (CUDA kernels as before the session; CUDA_FLASH
# refuses PrefixLM ranges): every backend test, the runtime tests (PaliGemma on the host's CPU among
# them), the conformance suite, verified runs on the GPU and on the host's 16 cores, and what
# `attnkit run` says for PaliGemma on the GPU.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s24/bin3.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
Z=/tmp/z S=$OUT/summary.txt
SECONDS=0
$Z/attnkit_test_backends > $OUT/tests.txt 2>&1; echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $OUT/tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" > $S
grep -E "PrefixLm" $OUT/tests.txt >> $S
$Z/attnkit_test_runtime >> $OUT/tests.txt 2>&1; echo "runtime tests rc=$? ${SECONDS}s" >> $S
$Z/attnkit_test_conformance > $OUT/conformance.txt 2>&1; echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|features change|undeclared' $OUT/conformance.txt | cut -c1-170 >> $S
B=$Z/attnkit
{ $B run --device cuda --verify --quiet
  $B run --device cuda --verify --quiet --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8
  $B run --device cpu --verify --quiet --model paligemma-3b-pt-224 --requests 8 --prompt-len 600 --decode-steps 16
  $B run --device cpu --verify --quiet --model paligemma-3b-pt-224 --dtype bfloat16 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 400
  $B run --device cpu --verify --quiet --model gpt-oss-20b --requests 2 --prompt-len 200; } > $OUT/run.log 2>&1
echo "runs rc=$? $(grep -c 'verification: OK' $OUT/run.log) verified ${SECONDS}s" >> $S
$B run --device cuda --model paligemma-3b-pt-224 --dtype bfloat16 > $OUT/run_paligemma_cuda.txt 2>&1; echo "paligemma on cuda rc=$? (3: unsupported)" >> $S
cat $S
