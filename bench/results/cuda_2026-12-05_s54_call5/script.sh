#!/bin/bash
# Session 54, call 5: call 4's initcheck found the host reading back a report word the check
# kernel had left unwritten when every rule held (report[1]); the kernel now writes both. The
# checks' GPU test plain and under the four sanitizers on that build.
cd "$(dirname "$0")/../../.." && rm -rf /tmp/x /tmp/r && mkdir -p /tmp/x /tmp/r
xz -dc .devbin/s54c/attnkit_test_backends.xz > /tmp/x/t && chmod +x /tmp/x/t
S=/tmp/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $S
T='CudaFlash.DeviceArgumentChecksNameTheBadEntry:CudaFlash.WriteKvEncodesLikeHost:CudaFlash.GraphCaptureDecodeSplits'
timeout 60 /tmp/x/t --gtest_filter=$T > /tmp/r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/r/tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck synccheck initcheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 17 --print-limit 20 /tmp/x/t --gtest_filter=$T > /tmp/r/sanitizer_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/r/sanitizer_$tool.txt | tail -1) $(grep -c '^\[       OK' /tmp/r/sanitizer_$tool.txt) ok ${SECONDS}s" >> $S
done
tar czf $OUT/call5.tgz -C /tmp/r .
cat $S
