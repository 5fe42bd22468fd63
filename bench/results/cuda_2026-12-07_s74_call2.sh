#!/bin/bash
# Session 74, device call 2: (a) HEAD against (b) session 67's one-run copies for heads 80 and 96
# (419836f's kernel part again, on today's swizzled 192- and 160-byte rows), both built here for
# sm_90a only so that both sides fit one upload (.devbin/s74s90/bin.txz, not in git: a/attnkit,
# b/ with the two test binaries). 1. ncu of (b)'s first head-96 prefill launch with source counters
# (call 1 holds (a)'s); 2. v2 prefill at heads 80, 96 and 128 (the control: its code is the same
# on both sides), a b alternating, five rounds, and the peers' rows; 3. (b)'s tests of the changed
# copies (PagesHoldingWholeTiles and the sanitizer suite's two-m-tile prefill test) under
# memcheck and racecheck; 4. every GPU test of (b) while the call's time lasts.
cd "$(dirname "$0")/../.." && rm -rf /tmp/ab && mkdir -p /tmp/ab && tar xJf .devbin/s74s90/bin.txz -C /tmp/ab
export ATTNKIT_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=/tmp/ab/lib
S=$OUT/summary.txt SECONDS=0 CAP=${CAP:-560} B=/tmp/ab/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
ak() { local side=$1; shift; timeout 120 /tmp/ab/$side/attnkit "$@"; }
NCU="ncu --set full --section SourceCounters --import-source no --kernel-name regex:flash_fwd_kernel --launch-count 1"
timeout 120 $NCU -o $OUT/b_96 $B/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 96 --quick --out /tmp/x.jsonl > $OUT/ncu_b_96.log 2>&1
echo "ncu b d96 rc=$? ${SECONDS}s" >> $S
ncu -i $OUT/b_96.ncu-rep --page source --csv --print-source sass > $OUT/b_96_sass.csv 2>&1
ncu -i $OUT/b_96.ncu-rep --page raw --csv > $OUT/b_96_raw.csv 2>&1
for r in 1 2 3 4 5; do for side in a b; do
  ak $side bench --device cuda --suite prefill --variant v2 --prefill-heads 80,96,128 --out $OUT/prefill_${side}_r$r.jsonl > $OUT/prefill_${side}_r$r.log 2>&1
  echo "prefill v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers_gpu.py --suite prefill --prefill-heads 80,96,128 --out $OUT/peers_prefill.jsonl > $OUT/peers_prefill.log 2>&1
echo "peers prefill rc=$? ${SECONDS}s" >> $S
F='CudaFlash.PagesHoldingWholeTiles:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode'
timeout 60 $B/attnkit_test_backends --gtest_filter="$F" > $OUT/tests_copies.log 2>&1
echo "tests $F rc=$? $(grep -hE '^\[  PASSED|^\[  FAILED' $OUT/tests_copies.log | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $B/attnkit_test_backends --gtest_filter="$F" > $OUT/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -hE 'SUMMARY|^\[  PASSED|^\[  FAILED' $OUT/san_$tool.log | tr '\n' ';') ${SECONDS}s" >> $S
done
export TEST_BIN=$B/attnkit_test_backends CONF_BIN=$B/attnkit_test_conformance ATTNKIT=$B/attnkit
timeout $((CAP - SECONDS)) scripts/gpu_check.sh --no-build --steps=tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests rc=$? $(grep -chE '^\[ +OK' $OUT/g/tests.log) ok; $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/g/tests.log | cut -c1-90 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.csv *.jsonl *.log g 2>/dev/null; rm -rf *.csv *.jsonl *.log gpu_check*.txt g
cat $S
