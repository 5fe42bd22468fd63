#!/usr/bin/env bash
# Configures and builds a preset: cpu, cuda, debug, or auto (default; see scripts/preset.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-auto}"
[ "$preset" = auto ] && preset=$(bash scripts/preset.sh)
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
