#!/bin/bash
# s12 r4: CPU_FLASH's AMX direct path for items of up to 64 rows, on the H200 host's CPU: the CPU
# tests and conformance (new build), then the CPU bench, HEAD ("head") against the new build
# ("new"), alternating: prefill 3 rounds, decode 2 rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s12/bin4.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0; lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-120
/tmp/b/attnkit_test_backends --gtest_brief=1 > /tmp/tests.log 2>&1; echo "backends rc=$? $(tail -3 /tmp/tests.log | tr '\n' ' ') ${SECONDS}s"
/tmp/b/attnkit_test_conformance --gtest_brief=1 > /tmp/conf.log 2>&1; echo "conformance rc=$? $(grep -E 'CPU_FLASH .*cells checked|PASSED|FAILED' /tmp/conf.log | tr '\n' ' ') ${SECONDS}s"
for r in 1 2 3; do for v in head new; do /tmp/b/attnkit_$v bench --device cpu --suite prefill --out /tmp/pre_${v}_$r.jsonl > /dev/null 2>&1; done; done; echo "prefill done ${SECONDS}s"
for r in 1 2; do for v in head new; do timeout 150 /tmp/b/attnkit_$v bench --device cpu --suite decode --out /tmp/dec_${v}_$r.jsonl > /dev/null 2>&1; echo "decode $r $v rc=$? ${SECONDS}s"; done; done
python3 - <<'PY' > $OUT/s12r4_h200host_cpu_ab.jsonl
import json, glob
for f in sorted(glob.glob('/tmp/pre_*.jsonl') + glob.glob('/tmp/dec_*.jsonl')):
    suite, v, r = f.split('/')[-1][:-6].split('_')
    for l in open(f):
        d = json.loads(l); d['ab'] = 'before' if v == 'head' else 'after'; d['round'] = int(r); d['suite'] = suite; print(json.dumps(d))
PY
cp /tmp/conf.log $OUT/s12r4_conformance.log; tail -5 /tmp/tests.log > $OUT/s12r4_tests_tail.log
