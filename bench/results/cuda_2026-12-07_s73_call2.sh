#!/bin/bash
# Session 73, device call 2 (right after call 1, on its warm machine): side (a), session 72's final
# build (.devbin/s72d/bin.txz, not in git), against (e), this session's build left in /tmp/e by
# call 1. 1. ncu of (a)'s launches that call 1 profiled for (e); 2. v2 prefill at bf16 head 80 (96
# and 128: controls), a e alternating, five rounds; 3. v2 prefill over fp8 caches at every
# head to 256 and 192/128, three rounds; 4. decode (bf16 and fp8 caches) at heads 80, 96,
# 160 and 224, two rounds; 5. the peers' prefill rows at 64, 80 and 96; 6. (e)'s conformance
# suite if call 1 ran out of time before it. Without /tmp/e (a cold machine) only (a)'s items run.
cd "$(dirname "$0")/../.." && rm -rf /tmp/a && mkdir -p /tmp/a && tar xJf .devbin/s72d/bin.txz -C /tmp/a
export ATTNKIT_MODELS_DIR=$PWD/models
SIDES="a e"; [ -x /tmp/e/attnkit ] || SIDES=a
S=$OUT/summary.txt SECONDS=0 CAP=${CAP:-575}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
echo "sides: $SIDES" >> $S
ak() { local side=$1; shift; LD_LIBRARY_PATH=/tmp/$side/lib timeout 90 /tmp/$side/attnkit "$@"; }
M=launch__registers_per_thread,launch__shared_mem_per_block_dynamic,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,gpu__time_duration.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum
for kv in bfloat16 fp8_e4m3; do
  h=80; [ $kv = bfloat16 ] || h=96
  LD_LIBRARY_PATH=/tmp/a/lib timeout 60 ncu --metrics $M --kernel-name regex:flash_fwd_kernel --launch-count 1 --csv /tmp/a/attnkit bench --device cuda --suite prefill --variant v2 --prefill-kv $kv --prefill-heads $h --quick --out /tmp/x.jsonl > $OUT/ncu_a_${kv}_d$h.csv 2>&1
  echo "ncu a $kv d$h rc=$? ${SECONDS}s" >> $S
done
for r in 1 2 3 4 5; do for side in $SIDES; do
  ak $side bench --device cuda --suite prefill --variant v2 --prefill-heads 80,96,128 --out $OUT/prefill_${side}_r$r.jsonl > $OUT/prefill_${side}_r$r.log 2>&1
  echo "prefill v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
for r in 1 2 3; do for side in $SIDES; do
  ak $side bench --device cuda --suite prefill --variant v2 --prefill-kv fp8_e4m3 --prefill-heads 64,80,96,128,160,192,224,256,192/128 --out $OUT/fp8prefill_${side}_r$r.jsonl > $OUT/fp8prefill_${side}_r$r.log 2>&1
  echo "fp8 prefill v2 $side r$r rc=$? ${SECONDS}s" >> $S
done; done
for r in 1 2; do for side in $SIDES; do for h in 80 96 160 224; do
  ak $side bench --device cuda --suite decode --decode-head $h --decode-heads 32/8 --decode-grid 1x32768,16x8192,64x4096 --out $OUT/decode${h}_${side}_r$r.jsonl > $OUT/decode${h}_${side}_r$r.log 2>&1
  echo "decode $h $side r$r rc=$? ${SECONDS}s" >> $S
done; done; done
PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers_gpu.py --suite prefill --prefill-heads 64,80,96 --out $OUT/peers_prefill.jsonl > $OUT/peers_prefill.log 2>&1
echo "peers prefill rc=$? ${SECONDS}s" >> $S
if [ -x /tmp/e/attnkit ] && [ ! -e /tmp/e/conformance_done ]; then
  export LD_LIBRARY_PATH=/tmp/e/lib TEST_BIN=/tmp/e/attnkit_test_backends CONF_BIN=/tmp/e/attnkit_test_conformance ATTNKIT=/tmp/e/attnkit
  timeout $((CAP - SECONDS)) scripts/gpu_check.sh --no-build --steps=conformance $OUT/gc > $OUT/gpu_check_conf.txt 2>&1
  echo "gpu_check conformance (e) rc=$? $(grep -hE '^conformance: CUDA|^\[  PASSED|FAILED  \]' $OUT/gc/conformance.log | cut -c1-100 | tr '\n' ';') ${SECONDS}s" >> $S
fi
cd $OUT && tar czf all.tgz *.txt *.csv *.jsonl *.log gc 2>/dev/null; rm -rf *.csv *.jsonl *.log gpu_check*.txt gc
cat $S
