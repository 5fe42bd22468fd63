#!/bin/bash
# Session 75, device call 1: session 74's call 3 (it found no machine) with a third side, head 64
# added and seven rounds. (a) HEAD; (c) session 74's change: over pages that hold whole tiles the
# 16-bit two-m-tile prefill form keeps the next tile's page in registers instead of the page ring
# (no shared load between the barrier and the copies, no ring entry stored a tile), and heads 80 and
# 96 copy such tiles as one run of chunks; (d) (c) with the first tiles' block-table loads issued
# before Q's copies and no prologue barrier over such pages. a and c as session 74 built them, d
# built here the same way (sm_90a only; .devbin/s75/bin.txz, not in git: a/attnkit, c/attnkit, d/
# with the test binaries). 1. ncu of (d)'s first head-96 prefill launch; 2. v2 prefill at heads 64
# (128-key tiles, no packed copies: a control), 80, 96 and 128, a c d in turn, seven rounds, and the
# peers' rows; 3. (d)'s tests of the copies under memcheck and racecheck; 4. every GPU test of (d)
# while time lasts.
cd "$(dirname "$0")/../.." && rm -rf /tmp/ac && mkdir -p /tmp/ac && tar xJf .devbin/s75/bin.txz -C /tmp/ac
export ATTNKIT_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=/tmp/ac/lib
S=$OUT/summary.txt SECONDS=0 CAP=${CAP:-400} C=/tmp/ac/d
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
ak() { local side=$1; shift; timeout 120 /tmp/ac/$side/attnkit "$@"; }
NCU="ncu --set full --section SourceCounters --import-source no --kernel-name regex:flash_fwd_kernel --launch-count 1"
timeout 120 $NCU -o $OUT/d_96 $C/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 96 --quick --out /tmp/x.jsonl > $OUT/ncu_d_96.log 2>&1
echo "ncu d d96 rc=$? ${SECONDS}s" >> $S
ncu -i $OUT/d_96.ncu-rep --page source --csv --print-source sass > $OUT/d_96_sass.csv 2>&1
ncu -i $OUT/d_96.ncu-rep --page raw --csv > $OUT/d_96_raw.csv 2>&1
rm -f $OUT/d_96.ncu-rep
for r in 1 2 3 4 5 6 7; do for side in a c d; do
  ak $side bench --device cuda --suite prefill --variant v2 --prefill-heads 64,80,96,128 --out $OUT/prefill_${side}_r$r.jsonl > $OUT/prefill_${side}_r$r.log 2>&1
  echo "prefill v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers_gpu.py --suite prefill --prefill-heads 64,80,96,128 --out $OUT/peers_prefill.jsonl > $OUT/peers_prefill.log 2>&1
echo "peers prefill rc=$? ${SECONDS}s" >> $S
F='CudaFlash.PagesHoldingWholeTiles:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode'
timeout 60 $C/attnkit_test_backends --gtest_filter="$F" > $OUT/tests_copies.log 2>&1
echo "tests $F rc=$? $(grep -hE '^\[  PASSED|^\[  FAILED' $OUT/tests_copies.log | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $C/attnkit_test_backends --gtest_filter="$F" > $OUT/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -hE 'SUMMARY|^\[  PASSED|^\[  FAILED' $OUT/san_$tool.log | tr '\n' ';') ${SECONDS}s" >> $S
done
export TEST_BIN=$C/attnkit_test_backends CONF_BIN=$C/attnkit_test_conformance ATTNKIT=$C/attnkit
timeout $((CAP - SECONDS)) scripts/gpu_check.sh --no-build --steps=tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests rc=$? $(grep -chE '^\[ +OK' $OUT/g/tests.log) ok; $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/g/tests.log | cut -c1-90 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.csv *.jsonl *.log g 2>/dev/null; rm -rf *.csv *.jsonl *.log gpu_check*.txt g
cat $S
