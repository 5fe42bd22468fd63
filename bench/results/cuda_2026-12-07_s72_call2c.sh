#!/bin/bash
# Session 72, device call 2c (after 2b, same build (c), .devbin/s72c/bin.txz): what 2b's time
# left of gpu_check's runs and sanitizer steps, then its bench and peer steps side by side.
cd "$(dirname "$0")/../.." && rm -rf /tmp/c && mkdir -p /tmp/c && tar xJf .devbin/s72c/bin.txz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 C=/tmp/c CAP=${CAP:-585} STEPS=${STEPS:-runs,sanitizers,bench,peers}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
export TEST_BIN=$C/attnkit_test_backends CONF_BIN=$C/attnkit_test_conformance ATTNKIT=$C/attnkit
timeout $((CAP - SECONDS)) scripts/gpu_check.sh --no-build --steps=$STEPS $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check $STEPS rc=$? $(grep -h 'SUMMARY' $OUT/g/sanitizer-*.log 2>/dev/null | tr '\n' ';') $(grep -c 'verification: OK' $OUT/g/run.log 2>/dev/null) runs OK; $(ls $OUT/g | tr '\n' ' ') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt g && rm -rf gpu_check.txt g
cat $S
