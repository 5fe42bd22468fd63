#!/bin/bash
# s23 device run 3: on the H200 host's CPU (16 cores, AMX), the interleaved in-process A/Bs of this
# session's CPU_FLASH changes (temporary switches in these two binaries): the fp32 micro-GEMM's
# register block 8x2 against 6x4 (INTERLEAVE=1; bf16 rows run AMX there, unaffected), and the fp32
# path's few-rows form at up to 32 rows against 16 (prefill items of 32 rows, ROWS_T=32).
cd "$(dirname "$0")" && mkdir -p y && tar xJf bin3.txz -C y && cd y
export LD_LIBRARY_PATH=$PWD/../x/lib
[ -d ../x/lib ] || { mkdir -p ../x && tar xJf ../bin1.txz -C ../x; }
O=$OUT/interleaved.txt
for i in 1 2; do INTERLEAVE=1 ./attnkit_blk bench --device cpu --suite prefill 2>&1 >/dev/null | grep IL | sed 's/^/blk6x4 /' >> $O; done
for i in 1 2; do ROWS_T=32 INTERLEAVE=32 ./attnkit_few3 bench --device cpu --suite prefill 2>&1 >/dev/null | grep IL | sed 's/^/few32 /' >> $O; done
cat $O
