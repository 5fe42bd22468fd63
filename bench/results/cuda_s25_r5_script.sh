#!/bin/bash
# s25 device run 5 (review): both prefill forms now mask through one RowMask helper instead of two
# copies of the masking loop. SASS of every kernel against the build before (57fc5f3): all bodies
# are expected unchanged; the CUDA tests and the CUDA conformance entries on the new build.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s25/bin5.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
Z=/tmp/z W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
python3 bench/results/sass_compare.py $Z/attnkit_base $Z/attnkit > $W/sass_vs_57fc5f3.txt 2>&1
head -1 $W/sass_vs_57fc5f3.txt > $S; grep -c added: $W/sass_vs_57fc5f3.txt >> $S
$Z/attnkit_test_backends --gtest_filter='CudaFlash*' > $W/tests.txt 2>&1
echo "backend tests rc=$? $(grep -E '^\[  PASSED|FAILED' $W/tests.txt | head -3 | tr '\n' ' ') ${SECONDS}s" >> $S
$Z/attnkit_test_conformance --gtest_filter='*CUDA*' > $W/conformance.txt 2>&1
echo "conformance rc=$? ${SECONDS}s" >> $S; grep -E 'cells checked|FAILED' $W/conformance.txt | cut -c1-200 >> $S
cat $S; tar czf $OUT/r5.tgz -C $W .
