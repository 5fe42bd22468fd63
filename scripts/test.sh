#!/usr/bin/env bash
# Builds and runs every test (GPU tests skip cleanly without a GPU). Preset as in build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-auto}"
[ "$preset" = auto ] && preset=$(bash scripts/preset.sh)
echo "attnkit tests: preset $preset"
bash scripts/build.sh "$preset"
ctest --preset "$preset"
