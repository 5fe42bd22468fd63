#!/bin/bash
# Session 59, call 4: scripts/gpu_check.sh's new sanitizer step (call 3 found the old one, every
# CudaFlash test under each tool, past its 300 s limit: memcheck reached 21 of 66 tests in 75 s),
# its block extracted from the script as committed and run as is on the same sm_90a binaries
# (.devbin/s59, main at 6bc4f05 whose tests are unchanged), with per-tool times.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r /tmp/c && mkdir -p /tmp/x /tmp/r/gpu_check /tmp/c
xz -dc .devbin/s59/attnkit_test_backends.xz > /tmp/x/attnkit_test_backends && chmod +x /tmp/x/attnkit_test_backends
tar xJf .devbin/s58cpu/bin.txz -C /tmp/c  # libfmt
export LD_LIBRARY_PATH=/tmp/c/lib
S=/tmp/r/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $S
{
  echo 'out=/tmp/r/gpu_check status=0 TEST_BIN=/tmp/x/attnkit_test_backends'
  sed -n '/^  small_tests=(/,/^  done/p' scripts/gpu_check.sh |
    sed 's/^  done/  echo "$tool done at ${SECONDS}s"\n  done/'
  echo 'echo "sanitizer step status $status"'
} > /tmp/r/san_step.sh
SAN_TIMEOUT=200 timeout 560 bash /tmp/r/san_step.sh > /tmp/r/san_step.out 2>&1
echo "sanitizer step rc=$? ${SECONDS}s" >> $S
tar czf $OUT/call4.tgz -C /tmp/r . && cp $S $OUT/summary.txt && cat $S /tmp/r/san_step.out
