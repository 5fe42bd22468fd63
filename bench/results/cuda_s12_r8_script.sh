#!/bin/bash
# s12 r8: the final build (17f1d7d) on the H200 machine: GPU and CPU tests, the whole conformance suite,
# verified runs (cuda default model; cpu default model; cpu gemma-2-9b over fp8), and the CPU
# bench (prefill and decode) on its 16 cores.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s12/bin8.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_brief=1 > $OUT/s12r8_tests.log 2>&1; echo "backends rc=$? $(tail -3 $OUT/s12r8_tests.log | tr '\n' ' ') ${SECONDS}s"
/tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/s12r8_conformance.log 2>&1; echo "conformance rc=$? $(grep -E 'cells checked|PASSED|FAILED' $OUT/s12r8_conformance.log | cut -c1-110 | tr '\n' ' ') ${SECONDS}s"
{
/tmp/b/attnkit run --device cuda --verify; echo "rc=$?"
/tmp/b/attnkit run --device cpu --verify; echo "rc=$?"
/tmp/b/attnkit run --device cpu --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 --verify; echo "rc=$?"
} > $OUT/s12r8_runs.log 2>&1; echo "runs: $(grep -E '^rc=|verification' $OUT/s12r8_runs.log | tr '\n' ' ') ${SECONDS}s"
/tmp/b/attnkit bench --device cpu --out $OUT/s12r8_h200host_cpu_bench.jsonl > /dev/null 2>&1; echo "cpu bench rc=$? ${SECONDS}s"
