#!/bin/bash
# s11 r6: the session's final build (commit in the log) on the H200 host: GPU + CPU tests,
# conformance, verified runs (cuda default model; cpu fp16; cpu fp32 over fp8 e5m2; cuda gemma-2-9b fp8).
cd "$(dirname "$0")/.." && R=$PWD
mkdir -p /tmp/b && tar xzf .devbin/bin.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
mkdir -p /tmp/o; SECONDS=0
/tmp/b/attnkit_test_backends --gtest_brief=1 > /tmp/o/tests.log 2>&1; echo "backends rc=$? $(tail -3 /tmp/o/tests.log | tr '\n' ' ') ${SECONDS}s"
/tmp/b/attnkit_test_conformance --gtest_brief=1 > /tmp/o/conf.log 2>&1; echo "conformance rc=$? $(grep -E 'PASSED|FAILED' /tmp/o/conf.log | tail -2 | tr '\n' ' ') ${SECONDS}s"
{ /tmp/b/attnkit run --device cuda --verify; /tmp/b/attnkit run --device cpu --verify --dtype float16; /tmp/b/attnkit run --device cpu --verify --dtype float32 --kv-cache-dtype fp8_e5m2; /tmp/b/attnkit run --device cuda --verify --model gemma-2-9b --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8; } > /tmp/o/run.log 2>&1; echo "runs rc=$? $(grep -c 'verification: OK' /tmp/o/run.log) OK ${SECONDS}s"
cd /tmp/o && tar czf $OUT/s11r6_logs.tgz tests.log conf.log run.log && grep -E "cells checked" conf.log
