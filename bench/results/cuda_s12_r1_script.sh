#!/bin/bash
# s12 r1: evict-first L2 policy on the decode form's K/V copies (constant policy operand).
# v1: policy only; v2: policy + shared address through a shuffle (session 5's ptxas guard).
# Tests + conformance (CUDA) on v1, verified runs on v1/v2, then decode A/B head/v1/v2, 2 rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b /tmp/o && tar xzf .devbin/s12/bin.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_brief=1 > $OUT/tests_v1.log 2>&1; echo "backends rc=$? $(tail -2 $OUT/tests_v1.log | tr '\n' ' ') ${SECONDS}s"
timeout 200 /tmp/b/attnkit_test_conformance --gtest_brief=1 --gtest_filter='*CUDA*' > $OUT/conf_v1.log 2>&1; echo "conformance rc=$? $(grep -E 'PASSED|FAILED|cells' $OUT/conf_v1.log | tail -4 | tr '\n' ' ') ${SECONDS}s"
for v in v1 v2; do /tmp/b/attnkit_$v run --device cuda --verify > $OUT/run_$v.log 2>&1; echo "run $v rc=$? $(grep -iE 'verif|error' $OUT/run_$v.log | tail -2 | tr '\n' ' ')"; done
/tmp/b/attnkit_v1 run --device cuda --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 --verify > $OUT/run_v1_gemma.log 2>&1; echo "gemma v1 rc=$?"
for round in 1 2; do
  for v in head v1 v2; do
    timeout 150 /tmp/b/attnkit_$v bench --device cuda --suite decode --out $OUT/ab_${v}_$round.jsonl > /dev/null 2>&1; echo "round $round $v rc=$? ${SECONDS}s"
  done
done
