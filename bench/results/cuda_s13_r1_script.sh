#!/bin/bash
# s13 r1: CUDA_MLA (the wide form with V read from the latent K rows): its GPU tests, then every
# GPU test, the conformance suite (CUDA_MLA cells), verified deepseek-v3 / glm-4.7-flash runs on
# the GPU, compute-sanitizer on the MLA tests, and the MLA bench suite.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s13/bin1.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
/tmp/b/attnkit_test_backends --gtest_filter='*Mla*' > $OUT/mla_tests.log 2>&1; echo "mla tests rc=$? ${SECONDS}s"; grep -E "OK|FAILED|Failure|error" $OUT/mla_tests.log | head -30
/tmp/b/attnkit_test_backends --gtest_brief=1 > $OUT/tests.log 2>&1; echo "backends rc=$? $(tail -3 $OUT/tests.log | tr '\n' ' ') ${SECONDS}s"
/tmp/b/attnkit_test_conformance --gtest_brief=1 > $OUT/conformance.log 2>&1; echo "conformance rc=$? ${SECONDS}s"; grep -E 'cells checked|FAILED|Failure' $OUT/conformance.log | cut -c1-200 | head -20
{
/tmp/b/attnkit run --device cuda --model deepseek-v3 --verify; echo "rc=$?"
/tmp/b/attnkit run --device cuda --model deepseek-v3 --kv-cache-dtype fp8_e4m3 --requests 4 --prompt-len 300 --decode-steps 8 --verify; echo "rc=$?"
/tmp/b/attnkit run --device cuda --model glm-4.7-flash --verify; echo "rc=$?"
/tmp/b/attnkit run --device cuda --verify; echo "rc=$?"
} > $OUT/runs.log 2>&1; echo "runs: $(grep -E '^rc=|verif' $OUT/runs.log | tr '\n' ' ') ${SECONDS}s"
for tool in memcheck racecheck synccheck initcheck; do
  compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.MlaAndFlash*:CudaFlash.MlaGraph*' > $OUT/san_$tool.log 2>&1; echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY' $OUT/san_$tool.log | tail -1) ${SECONDS}s"
done
/tmp/b/attnkit bench --device cuda --suite mla --out $OUT/bench_mla.jsonl > /dev/null 2>&1; echo "bench rc=$? ${SECONDS}s"
python3 - <<'PY' $OUT/bench_mla.jsonl
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('kind')=='device': print({k:r[k] for k in r if k in ('device','read_GBps','copy_GBps','empty_kernel_us') or 'GB' in k}); continue
    print(f"{r['kind']} b{r['batch']} hq{r['heads_q']} ctx{r['seq_k']} {r['kv_dtype']:9s} splits {r['splits']:3d} ms {r['ms']:.4f} GBps {r['GBps']:.0f} clean {r['GBps_clean_l2']:.0f} TFLOPs {r['TFLOPs']:.1f} probe_ms {r['probe_ms']:.4f} err {r['check_rel_err']:.1e}")
PY
