#!/bin/bash
# s20 r5: the graph-capture tests over the fp8 decode form at head 256 (forced splits; a ragged
# plan captured on shorter lengths, replayed over them and the full ones), with memcheck.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s20/tests.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
S=$OUT/summary.txt
F='CudaFlash.GraphCapture*:CudaFlash.RaggedDecode*:CudaFlash.Fp8DecodeFormWideHeads'
timeout 150 /tmp/b/attnkit_test_backends --gtest_filter="$F" > /tmp/t.log 2>&1; echo "tests rc=$? ${SECONDS}s" >> $S; grep -E "^\[ *(OK|FAILED|PASSED) |Failure|rel err" /tmp/t.log | head -30 >> $S
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.GraphCaptureDecodeSplits:CudaFlash.RaggedDecodeSplitsPerSequence' > /tmp/san.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1) ${SECONDS}s" >> $S
cat $S
