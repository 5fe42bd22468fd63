#!/bin/bash
# Session 62, device call 5: gpu_check.sh's bench and peers steps as one command (never run whole
# before), on call 1's build d62fdee (.devbin/s62/bin.txz a/attnkit; the kernels committed at the
# end of the session are the same: call 4's change was reverted).
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s62/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models ATTNKIT=/tmp/b/a/attnkit
S=$OUT/summary.txt SECONDS=0
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 470 bash scripts/gpu_check.sh --no-build --steps=bench,peers $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check bench,peers rc=$? ${SECONDS}s; $(ls $OUT/g | tr '\n' ' ')" >> $S
cd $OUT && tar czf all.tgz gpu_check.txt g && rm -rf g gpu_check.txt
