#!/bin/bash
# Session 59, call 6: the committed scripts/gpu_check.sh (bc02bc5: --steps, --check-lists) as a
# user runs one part of it, on session 59's sm_90a binaries of main's library and tests
# (.devbin/s59): --check-lists, then --steps=sanitizers.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r /tmp/c && mkdir -p /tmp/x /tmp/r /tmp/c
for b in attnkit attnkit_test_backends attnkit_test_conformance; do xz -dc .devbin/s59/$b.xz > /tmp/x/$b && chmod +x /tmp/x/$b; done
tar xJf .devbin/s58cpu/bin.txz -C /tmp/c  # libfmt
export ATTNKIT_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=/tmp/c/lib
export TEST_BIN=/tmp/x/attnkit_test_backends CONF_BIN=/tmp/x/attnkit_test_conformance ATTNKIT=/tmp/x/attnkit
S=/tmp/r/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $S
scripts/gpu_check.sh --check-lists > /tmp/r/check_lists.out 2>&1
echo "gpu_check.sh --check-lists rc=$? ${SECONDS}s" >> $S
timeout 400 scripts/gpu_check.sh --no-build --steps=sanitizers /tmp/r/gpu_check > /tmp/r/gpu_check.out 2>&1
echo "gpu_check.sh --no-build --steps=sanitizers rc=$? ${SECONDS}s" >> $S
tar czf $OUT/call6.tgz -C /tmp/r . && cp $S $OUT/summary.txt && cat $S /tmp/r/gpu_check.out
