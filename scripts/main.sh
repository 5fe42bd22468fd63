#!/usr/bin/env bash
# The main job: builds, then serves the bundled default model (qwen3-0.6b) through the selected
# kernels on the detected device (a CUDA GPU when present, else the CPU) and verifies sampled
# layers against CPU_REFERENCE. Extra arguments go to `attnkit run`.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$(bash scripts/preset.sh)
bash scripts/build.sh "$preset"
exec "build/$preset/tools/attnkit/attnkit" run --verify "$@"
