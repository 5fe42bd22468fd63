#!/usr/bin/env bash
# Installs what attnkit needs to build and test on a fresh Debian machine (idempotent).
set -euo pipefail
pkgs=(cmake g++ make nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libgmock-dev
      libbenchmark-dev libhwy-dev libopenblas-dev clang-format)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
