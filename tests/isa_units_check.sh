#!/usr/bin/env bash
# Checks CPU_FLASH's ISA variant objects (kernel_*.o but the scalar one), which are built for
# AVX2/AVX-512/AMX and may run only once detect_isa() picked them:
# 1. no start-up code (.init_array/.ctors): a static initializer runs on every CPU;
# 2. no VEX/EVEX/AMX instruction in a function shared with other files (a COMDAT group outside
#    the variant's isa_* namespace: an inline function or template emitted here), since the linker
#    keeps one copy of it for every caller. kernel.hpp says how the variants avoid both.
# Usage: isa_units_check.sh OBJDUMP OBJECT...
set -euo pipefail
objdump=$1
shift
checked=0 bad=0
for obj in "$@"; do
  name=$(basename "$obj")
  [[ $name == kernel_* && $name != kernel_scalar* ]] || continue
  checked=$((checked + 1))
  if "$objdump" -h "$obj" | grep -qE '\.init_array|\.ctors'; then
    echo "$name: start-up code (a static initializer)"
    bad=1
  fi
  # "section<TAB>mnemonic" for every instruction of the COMDAT text sections.
  found=$("$objdump" -d --no-show-raw-insn "$obj" | awk '
    /^Disassembly of section / { sec = $4; sub(/:$/, "", sec); next }
    sec ~ /^\.text\.(unlikely\.|hot\.)?_Z/ && /^ +[0-9a-f]+:\t/ {
      split($0, f, "\t"); split(f[2], m, " ")
      if (m[1] ~ /^(v|k|tile|tdp|ldtilecfg|sttilecfg)/) print sec "\t" m[1]
    }' | sort -u -t$'\t' -k1,1)
  while IFS=$'\t' read -r sec mnemonic; do
    [ -n "$sec" ] || continue
    fn=$(echo "${sec#.text.}" | sed -E 's/^(unlikely|hot)\.//' | c++filt)
    [[ $fn == *::isa_* ]] && continue
    echo "$name: $fn is shared with other files and has $mnemonic"
    bad=1
  done <<<"$found"
done
if ((checked == 0)); then
  echo "no ISA variant objects among the arguments"
  exit 1
fi
((bad == 0)) || exit 1
echo "$checked ISA variant objects: no start-up code, no ISA instructions in shared functions"
