#!/bin/bash
# Session 64, device call 6: the same build as call 5, on the same machine; gpu_check's bench and
# peers.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s64/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 280 bash scripts/gpu_check.sh --no-build --steps=bench,peers $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check bench,peers rc=$? ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt g && rm -rf g gpu_check.txt
