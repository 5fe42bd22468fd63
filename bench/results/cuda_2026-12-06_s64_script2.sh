#!/bin/bash
# Session 64, device call 2: the same build as call 1; gpu_check's runs (the verified serving
# runs), sanitizers (memcheck / racecheck / synccheck / initcheck), bench and peers.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s64/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 560 bash scripts/gpu_check.sh --no-build --steps=runs,sanitizers,bench,peers $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check runs,sanitizers,bench,peers rc=$? ${SECONDS}s" >> $S
tail -30 $OUT/gpu_check.txt >> $S
cd $OUT && tar czf all.tgz *.txt g && rm -rf g gpu_check.txt
