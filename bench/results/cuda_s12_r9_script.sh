#!/bin/bash
# s12 r9: the final build (4525aa9) on the H200 machine: GPU and CPU tests, the whole conformance
# suite, verified runs (cuda default model; cpu default model; cpu gemma-2-9b over fp8; cpu
# deepseek-v3), then deepseek-v3 on the CPU, kDirectRows 64 ("prev", 17f1d7d) against 128 (final),
# three alternating rounds, and the CPU bench on its 16 cores.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s12/bin9.tgz -C /tmp/b && tar xzf .devbin/s12/prev.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_brief=1 > $OUT/s12r9_tests.log 2>&1; echo "backends rc=$? $(tail -3 $OUT/s12r9_tests.log | tr '\n' ' ') ${SECONDS}s"
/tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/s12r9_conformance.log 2>&1; echo "conformance rc=$? $(grep -E 'cells checked|PASSED|FAILED' $OUT/s12r9_conformance.log | cut -c1-60 | tr '\n' ' ') ${SECONDS}s"
{
/tmp/b/attnkit run --device cuda --verify; echo "rc=$?"
/tmp/b/attnkit run --device cpu --verify; echo "rc=$?"
/tmp/b/attnkit run --device cpu --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 --verify; echo "rc=$?"
/tmp/b/attnkit run --device cpu --model deepseek-v3 --requests 2 --prompt-len 256 --decode-steps 16 --verify; echo "rc=$?"
for r in 1 2 3; do for v in attnkit_prev attnkit; do echo "deepseek $r $v: $(/tmp/b/$v run --device cpu --model deepseek-v3 --requests 4 --prompt-len 512 --decode-steps 32 2>&1 | grep 'tokens/s' | sed 's/^ *//')"; done; done
} > $OUT/s12r9_runs.log 2>&1; echo "runs: $(grep -E '^rc=|verification' $OUT/s12r9_runs.log | tr '\n' ' ') ${SECONDS}s"; grep deepseek $OUT/s12r9_runs.log
/tmp/b/attnkit bench --device cpu --out $OUT/s12r9_h200host_cpu_bench.jsonl > /dev/null 2>&1; echo "cpu bench rc=$? ${SECONDS}s"
