#!/bin/bash
# Session 72, device call 0: puts side (a)'s attnkit (07553a5's kernels, session 71's build,
# .devbin/s72a/bin.txz, not in git) in /tmp/a for call 1 on the same warm machine: the repository
# and both sides' binaries do not fit one call's 64 MiB upload. Also ncu of (a)'s first v2 prefill
# launch at head 96.
cd "$(dirname "$0")/../.." && rm -rf /tmp/a && mkdir -p /tmp/a && tar xJf .devbin/s72a/bin.txz -C /tmp/a
export LD_LIBRARY_PATH=/tmp/a/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
M=launch__registers_per_thread,launch__shared_mem_per_block_dynamic,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,gpu__time_duration.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum
timeout 60 ncu --metrics $M --kernel-name regex:flash_fwd_kernel --launch-count 1 --csv /tmp/a/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 96 --quick --out /tmp/x.jsonl > $OUT/ncu_a.csv 2>&1
echo "ncu a rc=$? ${SECONDS}s" >> $S
cat $S
