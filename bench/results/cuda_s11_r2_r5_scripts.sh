# s11 r2: .devbin/copybench (an earlier version of cuda_s11_copybench.cu: 1x32k only, no policy), then attnkit bench --device cuda --suite decode --decode-grid 1x32768, then copybench again
#!/bin/bash
# s11 r2: copy-mechanism microbenchmark for the 1x32k 32/4 decode's pages (copybench.cu), beside
# attnkit's own 1x32k decode rows in the same call.
cd "$(dirname "$0")/.." && R=$PWD
mkdir -p /tmp/b && tar xzf .devbin/bin.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
.devbin/copybench > $OUT/s11r2_copybench.jsonl 2>&1; echo "copybench rc=$? ${SECONDS}s"
/tmp/b/attnkit bench --device cuda --suite decode --decode-grid 1x32768 --out $OUT/s11r2_attnkit_1x32k.jsonl > /dev/null 2>&1; echo "attnkit rc=$? ${SECONDS}s"
.devbin/copybench > $OUT/s11r2_copybench_2.jsonl 2>&1; echo "copybench2 rc=$? ${SECONDS}s"

# s11 r3: the same binary with splits 32..256, identity/shuffled tables, contiguous reads
#!/bin/bash
# s11 r3: copybench with more CTAs (splits 32..256), identity vs shuffled page table, and a plain
# contiguous read of the same 64 MiB at five grid sizes.
cd "$(dirname "$0")/.." && SECONDS=0
for round in 1 2; do
  .devbin/copybench > $OUT/s11r3_copybench_shuffled_$round.jsonl 2>&1; echo "shuffled rc=$? ${SECONDS}s"
  IDENTITY=1 .devbin/copybench > $OUT/s11r3_copybench_identity_$round.jsonl 2>&1; echo "identity rc=$? ${SECONDS}s"
done

# s11 r4 ran the script below against the source without the cpasync_plain / cpasync_window forms; r5 with them (cuda_s11_copybench.cu)
#!/bin/bash
# s11 r5 (r4 + plain and window forms): copybench with an L2 policy (evict_normal / evict_first) on the cp.async and bulk copies,
# and __ldcs loads, at 1x32k 32/4 and at 64x4k 32/8 (large batch), two rounds.
cd "$(dirname "$0")/.." && SECONDS=0
for round in 1 2; do
  .devbin/copybench > $OUT/s11r5_1x32k_$round.jsonl 2>&1; echo "1x32k rc=$? ${SECONDS}s $(grep -c error $OUT/s11r5_1x32k_$round.jsonl)"
  SEQS=64 CTX=4096 HKV=8 .devbin/copybench > $OUT/s11r5_64x4k_$round.jsonl 2>&1; echo "64x4k rc=$? ${SECONDS}s"
  SEQS=16 CTX=8192 HKV=4 .devbin/copybench > $OUT/s11r5_16x8k_$round.jsonl 2>&1; echo "16x8k rc=$? ${SECONDS}s"
done
