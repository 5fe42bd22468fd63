#!/bin/bash
# Session 59, call 3: the tests half of `scripts/gpu_check.sh --no-build --skip-bench` on main at
# 6bc4f05 (the same sm_90a binaries as call 2): the CudaFlash GPU tests, the whole conformance
# binary, the seven verified serving runs and the four sanitizers on the small-shape tests, each
# sanitizer capped at SAN_TIMEOUT=75 s to fit the device's 600 s a command.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r /tmp/c && mkdir -p /tmp/x /tmp/r /tmp/c
for b in attnkit attnkit_test_backends attnkit_test_conformance; do xz -dc .devbin/s59/$b.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
tar xJf .devbin/s58cpu/bin.txz -C /tmp/c  # libfmt
export ATTNKIT_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=/tmp/c/lib PYTHONUNBUFFERED=1
S=/tmp/r/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader > $S
TEST_BIN=/tmp/x/attnkit_test_backends CONF_BIN=/tmp/x/attnkit_test_conformance ATTNKIT=/tmp/x/attnkit SAN_TIMEOUT=75 \
  timeout 560 scripts/gpu_check.sh --no-build --skip-bench /tmp/r/gpu_check > /tmp/r/gpu_check.out 2>&1
echo "gpu_check.sh --no-build --skip-bench rc=$? ${SECONDS}s" >> $S
tar czf $OUT/call3.tgz -C /tmp/r . && cp $S $OUT/summary.txt && cat $S /tmp/r/gpu_check.out
