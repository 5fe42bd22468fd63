#!/bin/bash
# s31 device run 1: the mixed suite on the GPU (session 30's bench refactor, first run; GPU code as
# in session 30); CPU_FLASH's prefetch order (bin attnkit = pages walked together, attnkit_A = HEAD
# 2431625, run by run) on the host's CPU: the decode suite alternating, the CPU tests and the
# conformance suite on the new build, verified runs on both devices.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s31/bin1.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r1.tgz -C $W . ; }
(nvidia-smi; nproc; lscpu | grep -E 'Model name|^CPU\(s\)|L3|Flags' | cut -c1-300) > $W/machine.txt 2>&1
timeout 150 /tmp/z/attnkit bench --device cuda --suite mixed --out $W/mixed.jsonl > /dev/null 2>>$W/err.txt
echo "mixed rc=$? ${SECONDS}s" >> $S
python3 - >> $S <<'PY'
import json
for l in open('/tmp/w/mixed.jsonl'):
    x = json.loads(l)
    if x.get('kind') not in ('mixed', 'mla_mixed'): continue
    alt = 'in_turn' if 'ms_in_turn' in x else 'parts_below_threshold'
    print(x['kind'], x['heads_q'], x['heads_kv'], x['kv_dtype'][:4], x['batch_lens'], x['seq_q'], 'plan', round(x['ms']*1e3,1), alt, round(x.get('ms_'+alt, 0)*1e3,1), 'one', round(x['ms_one_part']*1e3,1), 'two calls', round(x['ms_two_calls']*1e3,1), x['parts'], x['ok'])
PY
save
for r in 1 2; do for b in attnkit attnkit_A; do
  timeout 150 /tmp/z/$b bench --device cpu --suite decode --out $W/cpu_decode_${b}_r$r.jsonl > /dev/null 2>>$W/err.txt
  echo "cpu decode $b r$r rc=$? ${SECONDS}s" >> $S
done; save; done
timeout 240 /tmp/z/attnkit_test_backends --gtest_filter='CpuFlash*:CpuReference*' > $W/cpu_tests.txt 2>&1
echo "cpu tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/cpu_tests.txt | head -3) ${SECONDS}s" >> $S
save
timeout 240 /tmp/z/attnkit_test_conformance > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -cE 'cells checked' $W/conformance.txt) backends; $(grep -E 'cells checked|FAILED' $W/conformance.txt | cut -c1-160 | tr '\n' ';') ${SECONDS}s" >> $S
save
for d in cpu cuda; do
  timeout 120 /tmp/z/attnkit run --device $d --verify > $W/run_default_$d.log 2>&1
  echo "run $d rc=$? $(grep -c 'verification: OK' $W/run_default_$d.log) verified ${SECONDS}s" >> $S
done
save
cat $S
