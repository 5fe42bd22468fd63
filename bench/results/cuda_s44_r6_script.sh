#!/bin/bash
# s44 device run 6: run 5's build with its fix (non-causal chunked decode batches go to chunk
# pieces: the kChunk kernels bound a row's keys below only, so 3 non-causal conformance cells per
# generation failed in run 5). The chunked tests both ways (a non-causal decode-sized case added),
# those tests under memcheck, and the CUDA_FLASH conformance cells.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s44/bin6.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; cp $W/*.txt $OUT/ 2>/dev/null; }
T=/tmp/z/attnkit_test_backends
timeout 60 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA_FLASH*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 40 $T --gtest_filter='CudaFlash.Chunked*:CudaFlashHost.Chunk*:CudaFlashDeclaration.Chunk*' > $W/chunk_tests.txt 2>&1
echo "chunk tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|^\[       OK|FAILED  \]' $W/chunk_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
save
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='CudaFlash.Chunked*' > $W/sanitizer_memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $W/sanitizer_memcheck.txt | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
