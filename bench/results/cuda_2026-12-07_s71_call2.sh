#!/bin/bash
# Session 71, device call 2 (after call 1 on the same machine): gpu_check's bench and peer steps
# side by side (CUDA_FLASH's decode and prefill rows, v2's prefill, cuDNN and FlashAttention-2
# through torch SDPA, the copy/read/matmul ceilings). Binaries as call 1 (.devbin/s71/bin.txz).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s71/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 B=/tmp/b CAP=${CAP:-570}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
export TEST_BIN=$B/attnkit_test_backends CONF_BIN=$B/attnkit_test_conformance ATTNKIT=$B/attnkit
timeout $((CAP - 10)) scripts/gpu_check.sh --no-build --steps=bench,peers $OUT/g > $OUT/bench.txt 2>&1
echo "bench,peers rc=$? $(ls $OUT/g | tr '\n' ' ') ${SECONDS}s" >> $S
cd $OUT && tar czf all.tgz *.txt g 2>/dev/null; rm -rf bench.txt g; cat $S
