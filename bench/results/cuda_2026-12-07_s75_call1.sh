#!/bin/bash
# Session 75, device call 1: session 74's call 3 (it found no machine), with head 64 added and
# seven rounds. (a) HEAD against (c): over pages that hold whole tiles the 16-bit two-m-tile
# prefill form keeps the next tile's page in registers instead of the page ring (no shared load
# between the barrier and the copies, no ring entry stored a tile), and heads 80 and 96 copy such
# tiles as one run of chunks as in (b). Both built for sm_90a only in session 74
# (.devbin/s74c90/bin.txz, not in git: a/attnkit, c/ with the test binaries). 1. ncu of (c)'s first
# head-96 prefill launch; 2. v2 prefill at heads 64, 80, 96 and 128 (c changes 64's and 128's
# copies too), a c alternating, seven rounds, and the peers' rows; 3. (c)'s tests of the copies
# under memcheck and racecheck; 4. every GPU test of (c) while the call's time lasts.
cd "$(dirname "$0")/../.." && rm -rf /tmp/ac && mkdir -p /tmp/ac && tar xJf .devbin/s74c90/bin.txz -C /tmp/ac
export ATTNKIT_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=/tmp/ac/lib
S=$OUT/summary.txt SECONDS=0 CAP=${CAP:-400} C=/tmp/ac/c
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
ak() { local side=$1; shift; timeout 120 /tmp/ac/$side/attnkit "$@"; }
NCU="ncu --set full --section SourceCounters --import-source no --kernel-name regex:flash_fwd_kernel --launch-count 1"
timeout 120 $NCU -o $OUT/c_96 $C/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 96 --quick --out /tmp/x.jsonl > $OUT/ncu_c_96.log 2>&1
echo "ncu c d96 rc=$? ${SECONDS}s" >> $S
ncu -i $OUT/c_96.ncu-rep --page source --csv --print-source sass > $OUT/c_96_sass.csv 2>&1
ncu -i $OUT/c_96.ncu-rep --page raw --csv > $OUT/c_96_raw.csv 2>&1
rm -f $OUT/c_96.ncu-rep
for r in 1 2 3 4 5 6 7; do for side in a c; do
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
