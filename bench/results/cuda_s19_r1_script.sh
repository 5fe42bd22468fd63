#!/bin/bash
# s19 r1: CPU_FLASH's split rule by cost (a ragged batch's long sequence splits once it exceeds a
# quarter of a thread's share) on the host's 16 cores: CPU_FLASH tests; then the default CUDA decode
# suite with the new layer-loop timing (a graph of 4-32 layers' calls over their own caches), and
# the peer script's decode rows with the same loop.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xJf .devbin/s19a/bin.txz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
nproc; timeout 150 /tmp/b/attnkit_test_backends --gtest_filter='CpuFlash*' --gtest_brief=1 > $OUT/cpu_tests.log 2>&1; echo "cpu tests rc=$? $(tail -1 $OUT/cpu_tests.log) ${SECONDS}s"; grep -E "FAILED|Failure" $OUT/cpu_tests.log | head
timeout 270 /tmp/b/attnkit bench --device cuda --suite decode --out $OUT/decode.jsonl > /dev/null 2>$OUT/decode.err; echo "decode suite rc=$? ${SECONDS}s"; tail -3 $OUT/decode.err
timeout 170 python3 bench/peers_gpu.py --suite decode --out $OUT/peers_decode.jsonl > /dev/null 2>$OUT/peers.err; echo "peers rc=$? ${SECONDS}s"; tail -3 $OUT/peers.err
python3 - $OUT/decode.jsonl $OUT/peers_decode.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')!='decode': continue
        name=r.get('impl','attnkit')
        lens=r.get('batch_lens') or f"{r['batch']}x{r['seq_k']}"
        g=lambda k: f"{r[k]*1e3:.1f}" if k in r else '-'
        print(name, lens, r['heads_kv'], r['kv_dtype'][:4], r.get('page'), 'us write', g('ms'), 'clean', g('ms_clean_l2'), 'graph', g('ms_graph_clean_l2'), 'loop', g('ms_layer_loop'), 'x', r.get('layers'), f"loopGB/s {r.get('GBps_layer_loop',0):.0f}", 'ok', r.get('ok', r.get('error','')))
PY
