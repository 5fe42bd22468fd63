#!/usr/bin/env bash
# Builds and runs every test (GPU tests skip cleanly without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-cpu}"
bash scripts/build.sh "$preset"
ctest --preset "$preset"
