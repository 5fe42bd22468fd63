#!/bin/bash
# Session 74, device call 1: side (a), HEAD's build (.devbin/s74a/bin.txz, not in git; kernels as
# session 73's 2d3c5c8). Leaves it in /tmp/a for call 2, which brings side (b). 1. ncu with source
# counters of v2's first head-96 prefill launch (16 x 1k, non-causal) and of FA2's on the same shape
# (session 62's pair predates the swizzled 192-byte rows); 2. the randomized test on the GPU with a
# new seed (74001); 3. v2 prefill at heads 80, 96 and 128, two rounds, and the peers' rows; 4. on an
# H200 only, the 1x32k decode rows at 32/4 and 32/8 over bf16 and fp8 caches (#6's H200 row).
cd "$(dirname "$0")/../.." && rm -rf /tmp/a && mkdir -p /tmp/a && tar xJf .devbin/s74a/bin.txz -C /tmp/a
export ATTNKIT_MODELS_DIR=$PWD/models
S=$OUT/summary.txt SECONDS=0 CAP=${CAP:-560}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
ak() { local side=$1; shift; LD_LIBRARY_PATH=/tmp/$side/lib timeout 120 /tmp/$side/attnkit "$@"; }
NCU="ncu --set full --section SourceCounters --import-source no --kernel-name regex:flash_fwd_kernel --launch-count 1"
LD_LIBRARY_PATH=/tmp/a/lib timeout 120 $NCU -o $OUT/ak_96 /tmp/a/attnkit bench --device cuda --suite prefill --variant v2 --prefill-heads 96 --quick --out /tmp/x.jsonl > $OUT/ncu_ak_96.log 2>&1
echo "ncu a d96 rc=$? ${SECONDS}s" >> $S
PYTHONUNBUFFERED=1 timeout 150 $NCU -o $OUT/fa_96 python3 bench/peers_gpu.py --suite prefill --prefill-heads 96 --quick --out /tmp/y.jsonl > $OUT/ncu_fa_96.log 2>&1
echo "ncu fa2 d96 rc=$? ${SECONDS}s" >> $S
for k in ak_96 fa_96; do
  ncu -i $OUT/$k.ncu-rep --page source --csv --print-source sass > $OUT/${k}_sass.csv 2>&1
  ncu -i $OUT/$k.ncu-rep --page raw --csv > $OUT/${k}_raw.csv 2>&1
done
for b in CUDA_FLASH:400:70 CUDA_FLASH_v2:400:60 CUDA_MLA:150:40; do
  IFS=: read name n t <<<"$b"
  LD_LIBRARY_PATH=/tmp/a/lib ATTNKIT_FUZZ_SEED=74001 ATTNKIT_FUZZ_CASES=$n timeout $t /tmp/a/attnkit_test_conformance --gtest_filter="*Fuzz.*/$name" > $OUT/fuzz_$name.txt 2>&1
  echo "fuzz $name rc=$? $(grep -hE '^fuzz:|FAILED  \]' $OUT/fuzz_$name.txt | cut -c1-150 | tr '\n' ';') ${SECONDS}s" >> $S
done
for r in 1 2; do
  ak a bench --device cuda --suite prefill --variant v2 --prefill-heads 80,96,128 --out $OUT/prefill_a_r$r.jsonl > $OUT/prefill_a_r$r.log 2>&1
  echo "prefill v2 a r$r rc=$? ${SECONDS}s" >> $S
done
PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers_gpu.py --suite prefill --prefill-heads 80,96,128 --out $OUT/peers_prefill.jsonl > $OUT/peers_prefill.log 2>&1
echo "peers prefill rc=$? ${SECONDS}s" >> $S
if grep -q H200 $S && [ $((CAP - SECONDS)) -gt 120 ]; then
  for r in 1 2; do
    ak a bench --device cuda --suite decode --decode-heads 32/4,32/8 --decode-grid 1x32768 --out $OUT/decode_a_r$r.jsonl > $OUT/decode_a_r$r.log 2>&1
    echo "decode 1x32k a r$r rc=$? ${SECONDS}s" >> $S
  done
fi
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log *.csv 2>/dev/null; rm -rf *.jsonl *.log *.csv fuzz_*.txt
cat $S
