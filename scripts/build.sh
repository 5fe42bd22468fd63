#!/usr/bin/env bash
# Configures and builds a preset (default: cpu; "cuda" when nvcc is wanted).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-cpu}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
