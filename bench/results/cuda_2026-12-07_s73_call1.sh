#!/bin/bash
# Session 73, device call 1: this session's build (e, .devbin/s73e/bin.txz, not in git): rows of
# odd multiples of 32 bytes swizzled (16-bit head 80; fp8 heads 96, 160 and 224) and the fp8
# prefill's dequantization one row a lane (session 72's unrun diff). Leaves (e) in /tmp/e for call 2, which brings side (a), session 72's final build. 1. ncu of (e)'s first v2
# prefill launch at bf16 head 80 and fp8 head 96 (1k non-causal); 2. the four sanitizers over
# SharedRowsSwizzledEveryForm and the two-m-tile prefill test; 3. every GPU test and the
# conformance suite, while the call's time lasts (call 2 runs what is left of them).
cd "$(dirname "$0")/../.." && rm -rf /tmp/e && mkdir -p /tmp/e && tar xJf .devbin/s73e/bin.txz -C /tmp/e
export LD_LIBRARY_PATH=/tmp/e/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 E=/tmp/e CAP=${CAP:-575}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
M=launch__registers_per_thread,launch__shared_mem_per_block_dynamic,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,gpu__time_duration.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum
for kv in bfloat16 fp8_e4m3; do
  h=80; [ $kv = bfloat16 ] || h=96
  timeout 60 ncu --metrics $M --kernel-name regex:flash_fwd_kernel --launch-count 1 --csv $E/attnkit bench --device cuda --suite prefill --variant v2 --prefill-kv $kv --prefill-heads $h --quick --out /tmp/x.jsonl > $OUT/ncu_e_${kv}_d$h.csv 2>&1
  echo "ncu e $kv d$h rc=$? ${SECONDS}s" >> $S
done
F='CudaFlash.SharedRowsSwizzledEveryForm:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode'
for tool in memcheck racecheck synccheck initcheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 $E/attnkit_test_backends --gtest_filter="$F" > $OUT/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -hE 'SUMMARY|^\[  PASSED|^\[  FAILED' $OUT/san_$tool.log | tr '\n' ';') ${SECONDS}s" >> $S
done
export TEST_BIN=$E/attnkit_test_backends CONF_BIN=$E/attnkit_test_conformance ATTNKIT=$E/attnkit
timeout $((CAP - SECONDS)) scripts/gpu_check.sh --no-build --steps=tests $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests rc=$? $(grep -chE '^\[ +OK' $OUT/g/tests.log) ok; $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/g/tests.log | cut -c1-90 | tr '\n' ';') ${SECONDS}s" >> $S
if [ $((CAP - SECONDS)) -gt 80 ]; then
  timeout $((CAP - SECONDS)) scripts/gpu_check.sh --no-build --steps=conformance $OUT/gc > $OUT/gpu_check_conf.txt 2>&1
  echo "gpu_check conformance rc=$? $(grep -hE '^conformance: CUDA|^\[  PASSED|FAILED  \]' $OUT/gc/conformance.log | cut -c1-100 | tr '\n' ';') ${SECONDS}s" >> $S
  grep -q '^\[  PASSED' $OUT/gc/conformance.log && touch /tmp/e/conformance_done
fi
cd $OUT && tar czf all.tgz *.txt *.csv *.log g gc 2>/dev/null; rm -rf *.csv *.log gpu_check*.txt g gc
cat $S
