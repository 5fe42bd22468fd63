#!/bin/bash
# Session 72, device call 3 (the budget left, 470 s, holds one call of one build): (c) alone
# (.devbin/s72c/bin.txz, not in git; 192-byte rows swizzled plus the fp8 prefill's one-row-a-lane
# dequantization). 1. the four sanitizers over the 192-byte-row and fp8 prefill tests; 2. the
# conformance suite; 3. v2 prefill over fp8 caches at heads 64-256, three rounds (no (b) side in
# this call: compared with call 1 only if the card is the same kind); 4. ncu's shared-memory bank
# conflicts of the first fp8 prefill launch at head 96; 5. the fp8, prefill-form and 192-byte-row
# GPU tests while the call's time lasts.
cd "$(dirname "$0")/../.." && rm -rf /tmp/c && mkdir -p /tmp/c && tar xJf .devbin/s72c/bin.txz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 C=/tmp/c CAP=${CAP:-330}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
F='CudaFlash.SharedRows192EveryForm:CudaFlash.Fp8E4m3PerTensor:CudaFlash.Fp8E5m2PerHead:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode'
for tool in memcheck racecheck synccheck initcheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $C/attnkit_test_backends --gtest_filter="$F" > $OUT/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -hE 'SUMMARY|^\[  PASSED|^\[  FAILED' $OUT/san_$tool.log | tr '\n' ';') ${SECONDS}s" >> $S
done
timeout 120 $C/attnkit_test_conformance > $OUT/conformance.log 2>&1
echo "conformance rc=$? $(grep -hE '^conformance: CUDA.*cells checked|^\[  PASSED|FAILED  \]' $OUT/conformance.log | cut -c1-90 | tr '\n' ';') ${SECONDS}s" >> $S
for r in 1 2 3; do
  timeout 60 $C/attnkit bench --device cuda --suite prefill --variant v2 --prefill-kv fp8_e4m3 --prefill-heads 64,80,96,128,192,256 --out $OUT/fp8prefill_c_r$r.jsonl > $OUT/fp8prefill_c_r$r.log 2>&1
  echo "fp8 prefill v2 c r$r rc=$? ${SECONDS}s" >> $S
done
M=launch__registers_per_thread,gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
timeout 60 ncu --metrics $M --kernel-name regex:flash_fwd_kernel --launch-count 1 --csv $C/attnkit bench --device cuda --suite prefill --variant v2 --prefill-kv fp8_e4m3 --prefill-heads 96 --quick --out /tmp/x.jsonl > $OUT/ncu_fp8_96_c.csv 2>&1
echo "ncu fp8 96 c rc=$? ${SECONDS}s" >> $S
timeout $((CAP - SECONDS)) $C/attnkit_test_backends --gtest_filter='CudaFlash.*Fp8*:CudaFlash.SharedRows192EveryForm:CudaFlash.PagesHoldingWholeTiles:CudaFlash.TwoMTile*:CudaFlash.Prefill*' > $OUT/tests.log 2>&1
echo "tests rc=$? $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/tests.log | cut -c1-80 | tr '\n' ';') $(grep -c '^\[       OK' $OUT/tests.log) OK ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log *.csv 2>/dev/null; rm -rf *.jsonl *.log *.csv
cat $S
