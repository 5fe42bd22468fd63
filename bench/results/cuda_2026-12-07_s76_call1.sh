#!/bin/bash
# Session 76, device call 1: NOT RUN (seventeen tries found no machine;
# cuda_2026-12-07_s76_device_time.txt). Its binaries (.devbin/s76/bin.txz, not in git) are gone with
# this VM; to run it, build each side for sm_90a only (bench/NOTES.md, session 76: a = HEAD, b =
# HEAD + cuda_2026-12-07_s76_change_b.diff, c = HEAD + cuda_2026-12-07_s76_change_c.diff) and pack
# them as below. Sides: (a) HEAD (779d587); (b) the prologue's `next = ahead[t]` copies guarded by
# `packed` (session 75 found them reading an unwritten `ahead` entry where pages do not hold whole
# tiles); (c) (b) plus copy_packed_rows' destinations as 16 i kThreads + 16 (tid ^ swizzle(row))
# (heads 80 and 96: the loop's full-tile copy path 99 -> 78 instructions at head 96, 87 -> 79 at
# head 80, from nvdisasm of the sm_90a cubins; head 128's code is b's). All built here for sm_90a
# only (.devbin/s76/bin.txz, not in git: a/attnkit, b/attnkit, c/ with the two test binaries, lib/).
# 1. ncu of (c)'s first head-96 prefill launch; 2. v2 prefill at heads 64 (a control: no packed
# copies), 80, 96 and 128, a b c in turn, seven rounds, and the peers' rows; 3. (c)'s prefill tests,
# its copy tests under memcheck and racecheck, the conformance suite's CUDA_FLASH_v2 cells, the
# eleven GPU tests no build since c75741f has run, `attnkit run --device cuda --verify`, then every
# other GPU test while time lasts. NCU=0 skips step 1; ROUNDS sets step 2's rounds (default 7).
cd "$(dirname "$0")/../.." && rm -rf /tmp/ac && mkdir -p /tmp/ac && tar xJf .devbin/s76/bin.txz -C /tmp/ac
export ATTNKIT_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=/tmp/ac/lib
S=$OUT/summary.txt SECONDS=0 CAP=${CAP:-420} C=/tmp/ac/c T=/tmp/ac/c/attnkit_test_backends
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
res() { echo "$1 rc=$2 $(grep -hE 'SUMMARY|^\[  PASSED|^\[  FAILED|FAILED  \]|^\[ +SKIPPED \] [0-9]' $3 | cut -c1-90 | tr '\n' ';') ${SECONDS}s" >> $S; }
if [ "${NCU:-1}" = 1 ]; then
NCU="ncu --set full --section SourceCounters --import-source no --kernel-name regex:flash_fwd_kernel --launch-count 1"
timeout 120 $NCU -o $OUT/c_96 $C/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 96 --quick --out /tmp/x.jsonl > $OUT/ncu_c_96.log 2>&1
echo "ncu c d96 rc=$? ${SECONDS}s" >> $S
ncu -i $OUT/c_96.ncu-rep --page source --csv --print-source sass > $OUT/c_96_sass.csv 2>&1
ncu -i $OUT/c_96.ncu-rep --page raw --csv > $OUT/c_96_raw.csv 2>&1
rm -f $OUT/c_96.ncu-rep
fi
for r in $(seq ${ROUNDS:-7}); do for side in a b c; do
  timeout 120 /tmp/ac/$side/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 64,80,96,128 --out $OUT/prefill_${side}_r$r.jsonl > $OUT/prefill_${side}_r$r.log 2>&1
  echo "prefill v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers_gpu.py --suite prefill --prefill-heads 64,80,96,128 --out $OUT/peers_prefill.jsonl > $OUT/peers_prefill.log 2>&1
echo "peers prefill rc=$? ${SECONDS}s" >> $S
P=PagesHoldingWholeTiles:TwoMTilePrefillAndRegisterFp8Decode:PrefillFp16Head64PageOne:EveryManifestHeadPair
P=$P:SharedRowsSwizzledEveryForm:PrefillOutputRowsOfAnyAlignment:GrowingLogitsRescaleAcrossTiles
P=$P:PrefixLmRangesWidenRows:GraphCapturePrefixLmReplanReplay:WindowSoftcapAlibiSinks:NonCausalMqaHead256
P=$P:NonCausalTwoSidedWindow:DecodeGqaBf16Head128:GraphCaptureReplanReplay:Heads160And224
F1=CudaFlash.${P//:/:CudaFlash.}
timeout 120 $T --gtest_filter="$F1" > $OUT/tests_prefill.log 2>&1; res "tests prefill" $? $OUT/tests_prefill.log
F2='CudaFlash.PagesHoldingWholeTiles:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode'
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $T --gtest_filter="$F2" > $OUT/san_$tool.log 2>&1
  res "sanitizer $tool" $? $OUT/san_$tool.log
done
timeout 120 $C/attnkit_test_conformance --gtest_filter='*/CUDA_FLASH_v2' > $OUT/conformance_v2.log 2>&1
res "conformance CUDA_FLASH_v2" $? $OUT/conformance_v2.log
grep -hE '^(conformance|fuzz): CUDA' $OUT/conformance_v2.log >> $S
Q=EarlyCopiesFollowTheGrid:EarlyCopiesReadTheStepsKvWrite:RaggedDecodeSplitsPerSequence
Q=$Q:RaggedDecodeEveryFeature:ZeroPagesZeroesOnlyListedPages:ZeroPagesPastFourGiBManyAtOnce
Q=$Q:BlocksPastFourGiB:UnbuiltHeadSizeIsUnsupported:RunRejectsNonFiniteOrNegativeSoftcap
Q=$Q:WriteKvRejectsNullVOnACacheWithV:DeviceArgumentChecksNameTheBadEntry
F3=CudaFlash.${Q//:/:CudaFlash.}
left() { local t=$((CAP - SECONDS)); echo $((t < $1 ? (t > 1 ? t : 1) : $1)); }
timeout $(left 150) $T --gtest_filter="$F3" > $OUT/tests_unrun.log 2>&1; res "tests since c75741f" $? $OUT/tests_unrun.log
timeout $(left 90) $C/attnkit run --device cuda --verify > $OUT/run_cuda.log 2>&1
echo "attnkit run --device cuda --verify rc=$? $(grep -ciE 'verif' $OUT/run_cuda.log) lines naming verification ${SECONDS}s" >> $S
timeout $(left 9999) $T --gtest_filter="CudaFlash*:CudaMla*:-$F1:$F3" > $OUT/tests_rest.log 2>&1
echo "tests rest rc=$? $(grep -chE '^\[ +OK' $OUT/tests_rest.log) ok; $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/tests_rest.log | cut -c1-90 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.csv *.jsonl *.log 2>/dev/null; rm -rf *.csv *.jsonl *.log
cat $S
