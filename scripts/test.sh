#!/usr/bin/env bash
# Builds and runs every test. With nvcc at /usr/local/cuda the CUDA preset is used, so the CUDA
# kernels are compiled too (GPU tests skip cleanly without a GPU); otherwise the CPU preset.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-auto}"
if [ "$preset" = auto ]; then
  preset=cpu
  [ -x /usr/local/cuda/bin/nvcc ] && preset=cuda
fi
echo "attnkit tests: preset $preset"
bash scripts/build.sh "$preset"
ctest --preset "$preset"
