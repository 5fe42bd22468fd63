#!/bin/bash
# s11 r1: this session's final build (CPU_FLASH changes only; CUDA code as session 9/10) on the
# H200 host: GPU + CPU test binaries, conformance, verified runs; then the CPU bench on the host's
# 16 cores, the session's first commit (cpu preset binary) against this build, alternating.
cd "$(dirname "$0")/.." && R=$PWD
mkdir -p /tmp/b && tar xzf .devbin/bin.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
mkdir -p /tmp/o; SECONDS=0
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | sed 's/Flags:.*\(avx512_bf16\|amx_bf16\).*/Flags: (has avx512_bf16 or amx_bf16)/' > /tmp/o/cpu.txt
grep -o "amx_bf16\|avx512_bf16\|avx512f " /proc/cpuinfo | sort | uniq -c >> /tmp/o/cpu.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv >> /tmp/o/cpu.txt
/tmp/b/attnkit_test_backends --gtest_brief=1 > /tmp/o/tests.log 2>&1; echo "backends rc=$? $(tail -3 /tmp/o/tests.log | tr '\n' ' ') ${SECONDS}s"
/tmp/b/attnkit_test_conformance --gtest_brief=1 > /tmp/o/conf.log 2>&1; echo "conformance rc=$? $(grep -E 'PASSED|FAILED|cells' /tmp/o/conf.log | tail -6 | tr '\n' ' ') ${SECONDS}s"
{ /tmp/b/attnkit run --device cuda --verify; /tmp/b/attnkit run --device cpu --verify --dtype float16; /tmp/b/attnkit run --device cpu --verify --dtype float32 --kv-cache-dtype fp8_e5m2; } > /tmp/o/run.log 2>&1; echo "runs rc=$? $(grep -c 'verification: OK' /tmp/o/run.log) OK ${SECONDS}s"
for round in 1 2; do
  for b in head new; do
    bin=/tmp/b/attnkit; [ $b = head ] && bin=$R/.devbin/attnkit_cpu_head
    $bin bench --device cpu --out /tmp/o/cpu_${b}_$round.jsonl > /dev/null 2>&1; echo "cpu bench $b $round rc=$? ${SECONDS}s"
  done
done
python3 - <<'PY' > $OUT/s11r1_cpu_ab_h200host.jsonl
import json
for r in (1, 2):
    for b in ('head', 'new'):
        try:
            for l in open(f'/tmp/o/cpu_{b}_{r}.jsonl'):
                d = json.loads(l); d['build'] = b; d['round'] = r; print(json.dumps(d))
        except FileNotFoundError:
            pass
PY
cd /tmp/o && tar czf $OUT/s11r1_logs.tgz tests.log conf.log run.log cpu.txt && cp cpu.txt $OUT/
