#!/bin/bash
# Session 72, device call 1 (right after call 0, on its warm machine): 192-byte shared-memory rows
# (16-bit head 96, fp8 head 192) unpadded and swizzled in 64-byte quarters (b, this session's
# build, .devbin/s72b/bin.txz, not in git) against the padded rows of 07553a5's kernels (a, left
# in /tmp/a by call 0). 1. ncu's L2 sectors and requests of (b)'s first v2 prefill launch at head
# 96 (1k non-causal); 2. v2 prefill at heads 96 and 128 (control), a b alternating, five rounds;
# 3. v2 prefill over fp8 caches at 96, 192 and 192/128, three rounds; 4. decode at heads 96 and
# 192 (bf16 and fp8 caches), two rounds; 5. the peers' prefill rows at 96 and 128; 6. every GPU
# test and the conformance suite on (b). Without /tmp/a (a cold machine) only (b)'s items run.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s72b/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
SIDES="a b"; [ -x /tmp/a/attnkit ] || SIDES=b
S=$OUT/summary.txt SECONDS=0 B=/tmp/b CAP=${CAP:-580}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
echo "sides: $SIDES" >> $S
M=launch__registers_per_thread,launch__shared_mem_per_block_dynamic,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,gpu__time_duration.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum
for side in b; do
  timeout 60 ncu --metrics $M --kernel-name regex:flash_fwd_kernel --launch-count 1 --csv /tmp/$side/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 96 --quick --out /tmp/x.jsonl > $OUT/ncu_$side.csv 2>&1
  echo "ncu $side rc=$? ${SECONDS}s" >> $S
done
for r in 1 2 3 4 5; do for side in $SIDES; do
  timeout 60 /tmp/$side/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 96,128 --out $OUT/prefill_${side}_r$r.jsonl > $OUT/prefill_${side}_r$r.log 2>&1
  echo "prefill v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
for r in 1 2 3; do for side in $SIDES; do
  timeout 60 /tmp/$side/attnkit bench --device cuda --suite prefill --variant v2 --prefill-kv fp8_e4m3 --prefill-heads 96,192,192/128 --out $OUT/fp8prefill_${side}_r$r.jsonl > $OUT/fp8prefill_${side}_r$r.log 2>&1
  echo "fp8 prefill v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
for r in 1 2; do for side in $SIDES; do for h in 96 192; do
  timeout 60 /tmp/$side/attnkit bench --device cuda --suite decode --decode-head $h --decode-heads 32/8 --decode-grid 1x32768,16x8192,64x4096 --out $OUT/decode${h}_${side}_r$r.jsonl > $OUT/decode${h}_${side}_r$r.log 2>&1
  echo "decode $h $side r$r rc=$? ${SECONDS}s" >> $S
done; done; done
PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers_gpu.py --suite prefill --prefill-heads 96,128 --out $OUT/peers_prefill.jsonl > $OUT/peers_prefill.log 2>&1
echo "peers prefill rc=$? ${SECONDS}s" >> $S
export TEST_BIN=$B/attnkit_test_backends CONF_BIN=$B/attnkit_test_conformance ATTNKIT=$B/attnkit
timeout $((CAP - SECONDS)) scripts/gpu_check.sh --no-build --steps=tests,conformance $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check tests,conformance rc=$? $(grep -hE '^\[  PASSED|FAILED  \]' $OUT/g/tests.log $OUT/g/conformance.log 2>/dev/null | cut -c1-80 | tr '\n' ';') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt *.csv *.jsonl *.log g && rm -rf *.csv *.jsonl *.log gpu_check.txt g
cat $S
