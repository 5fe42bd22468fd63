#!/bin/bash
# s23 device run 2: the CPU bench's decode suite on the H200 host's CPU (16 cores), caches on huge
# pages (HEAD: the host KV allocator) against 4 KiB pages (the pre-change binary with a temporary
# MADV_NOHUGEPAGE switch, NOHUGE=1), two alternating rounds.
cd "$(dirname "$0")" && mkdir -p x && { [ -x x/attnkit ] || tar xJf bin1.txz -C x; } && cd x
export LD_LIBRARY_PATH=$PWD/lib
O=$OUT/cpu_decode_huge_ab.jsonl
for round in 1 2; do
  ./attnkit bench --device cpu --suite decode | sed "s/^{/{\"ab\":\"huge\",\"round\":$round,/" >> $O
  NOHUGE=1 ./attnkit_nohuge bench --device cpu --suite decode | sed "s/^{/{\"ab\":\"nohuge\",\"round\":$round,/" >> $O
done
wc -l $O
