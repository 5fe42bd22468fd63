#!/bin/bash
# Session 59, call 2: the bench half of the README's one GPU command, `scripts/gpu_check.sh
# --no-build --skip-tests --quick`, on main at 6bc4f05 (sm_90a binaries built here: .devbin/s59),
# to check that the documented command still runs end to end (CUDA bench, v2 and fp8-KV prefill
# rows, the peer script). First, with the GPU idle, whether the host's L3 keeps part of a working
# set several times its size read over and over (bench/results/cpu_2026-12-06_s59_l3_retention_probe.cpp):
# the CPU bench sizes its decode caches at ~4-5x L3.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r /tmp/c && mkdir -p /tmp/x /tmp/r /tmp/c
for b in attnkit attnkit_test_backends attnkit_test_conformance; do xz -dc .devbin/s59/$b.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
tar xJf .devbin/s58cpu/bin.txz -C /tmp/c  # libfmt
export ATTNKIT_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=/tmp/c/lib PYTHONUNBUFFERED=1
S=/tmp/r/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
g++ -O2 -mavx512f -pthread -o /tmp/r/retain bench/results/cpu_2026-12-06_s59_l3_retention_probe.cpp >> $S 2>&1
timeout 90 /tmp/r/retain $(nproc) 300 5 > /tmp/r/retain.txt 2>&1
echo "retention probe rc=$? ${SECONDS}s" >> $S
TEST_BIN=/tmp/x/attnkit_test_backends CONF_BIN=/tmp/x/attnkit_test_conformance ATTNKIT=/tmp/x/attnkit \
  timeout 440 scripts/gpu_check.sh --no-build --skip-tests --quick /tmp/r/gpu_check > /tmp/r/gpu_check.out 2>&1
echo "gpu_check.sh --no-build --skip-tests --quick rc=$? ${SECONDS}s" >> $S
tar czf $OUT/call2.tgz -C /tmp/r . && cp $S $OUT/summary.txt && cat $S /tmp/r/retain.txt /tmp/r/gpu_check.out
