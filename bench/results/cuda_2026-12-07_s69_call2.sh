#!/bin/bash
# Session 69, device call 2 (for call 1's warm machine): HEAD's binaries (.devbin/s68/bin.txz, not
# in git; kernels as 07553a5) through gpu_check's sanitizer suite (memcheck, racecheck, synccheck,
# initcheck on the small-shape tests), then its bench and peer steps side by side.
cd "$(dirname "$0")/../.." && { [ -x /tmp/b/attnkit ] || { rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s68/bin.txz -C /tmp/b; }; }
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b CAP=${CAP:-560}
left() { echo $((CAP - SECONDS)); }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
export TEST_BIN=$B/attnkit_test_backends CONF_BIN=$B/attnkit_test_conformance ATTNKIT=$B/attnkit
timeout 200 scripts/gpu_check.sh --no-build --steps=sanitizers $OUT/g > $OUT/san.txt 2>&1
echo "sanitizers rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/g/sanitizer-*.log | sort | uniq -c | tr '\n' ';') ${SECONDS}s" >> $S
timeout $(($(left) - 10)) scripts/gpu_check.sh --no-build --steps=bench,peers $OUT/g > $OUT/bench.txt 2>&1
echo "bench,peers rc=$? $(ls $OUT/g | tr '\n' ' ') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt g 2>/dev/null; rm -rf san.txt bench.txt g
