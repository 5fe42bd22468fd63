#!/bin/bash
# s26 device run 8: an fp32 encoder config on the GPU is refused with the dtypes that would run
# (the runtime tests, then the CLI), and the same model verified with --dtype bfloat16.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z && tar xJf .devbin/s26/bin8.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib
/tmp/z/attnkit_test_runtime 2>&1 | grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED) ' > $OUT/r8.txt
/tmp/z/attnkit run --model snowflake-arctic-embed-m --device cuda >> $OUT/r8.txt 2>&1; echo "rc=$?" >> $OUT/r8.txt
/tmp/z/attnkit run --model snowflake-arctic-embed-m --device cuda --dtype bfloat16 --verify --quiet 2>&1 | tail -4 >> $OUT/r8.txt
cat $OUT/r8.txt
