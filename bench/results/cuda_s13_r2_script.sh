#!/bin/bash
# s13 r2: CUDA_MLA tile variants (keys per tile, stages) 0:(16,2) 1:(16,3) 2:(16,4) 3:(32,2)
# 4:(32,3): the MLA tests under each, then the MLA bench suite, two alternating rounds.
cd "$(dirname "$0")/../.." && mkdir -p /tmp/b && tar xzf .devbin/s13/bin2.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
SECONDS=0
for v in 0 1 2 3 4; do ATTNKIT_MLA_VARIANT=$v /tmp/b/attnkit_test_backends --gtest_filter='CudaFlash.Mla*' > $OUT/tests_v$v.log 2>&1; echo "v$v tests rc=$? $(grep -c '  OK ' $OUT/tests_v$v.log) ok"; done
for r in 1 2; do for v in 0 1 2 3 4; do
  ATTNKIT_MLA_VARIANT=$v /tmp/b/attnkit bench --device cuda --suite mla --out $OUT/v${v}_r$r.jsonl > /dev/null 2>&1; echo "v$v r$r rc=$? ${SECONDS}s"
done; done
python3 - <<'PY' $OUT
import json,sys,glob,collections
d=collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1]+'/v*_r*.jsonl')):
    v=f.split('/')[-1].split('_')[0]
    for l in open(f):
        r=json.loads(l)
        if r.get('kind')!='mla_decode': continue
        k=(r['heads_q'],r['batch'],r['seq_k'],r['kv_dtype'])
        d[k].append((v,r['ms']*1e3,r['ok']))
for k in sorted(d):
    by=collections.defaultdict(list)
    for v,us,ok in d[k]: by[v].append(f"{us:.0f}{'' if ok else '!'}")
    print(k, ' '.join(f"{v}:{'/'.join(by[v])}" for v in sorted(by)))
PY
