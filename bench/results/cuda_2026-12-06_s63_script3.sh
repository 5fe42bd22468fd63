#!/bin/bash
# Session 63, device call 3 (same bundle as call 2): gpu_check's runs, sanitizers, bench and
# peers on bbcb20f's build; then the bench's 192/128 prefill rows with V packed at 128 (b:
# pv/attnkit) against V at K's stride (a), v2 and auto, a b a b.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s63/bin.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/lib ATTNKIT_MODELS_DIR=$PWD/models TEST_BIN=/tmp/b/attnkit_test_backends CONF_BIN=/tmp/b/attnkit_test_conformance ATTNKIT=/tmp/b/attnkit
S=$OUT/summary.txt SECONDS=0 B=/tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $S
timeout 420 bash scripts/gpu_check.sh --no-build --steps=runs,sanitizers,bench,peers $OUT/g > $OUT/gpu_check.txt 2>&1
echo "gpu_check runs,sanitizers,bench,peers rc=$? ${SECONDS}s" >> $S
grep -E "SUMMARY|verified|FAIL|error" $OUT/gpu_check.txt | head -20 >> $S
for r in 1 2; do for side in a b; do
  bin=$B/attnkit; [ $side = b ] && bin=$B/pv/attnkit
  for v in v2 auto; do
    timeout 40 $bin bench --device cuda --suite prefill --variant $v --prefill-heads 192/128 --out $OUT/prefill_pv_${v}_${side}_r$r.jsonl > $OUT/prefill_pv_${v}_${side}_r$r.log 2>&1
    echo "prefill 192/128 $v $side r$r rc=$? ${SECONDS}s" >> $S
  done
done; done
cd $OUT && tar czf all.tgz *.txt *.jsonl *.log g && rm -rf *.jsonl *.log g gpu_check.txt
