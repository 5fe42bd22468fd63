#!/bin/bash
# s44 device run 2: (1) a diagnostic of run 1's failing graph test (a chunked decode graph
# replayed over longer caches after a replan: direct and graph runs, chunked and not, the
# pieces' metadata dumped); (2) SASS of every kernel of this build (B) against 77c1fbb's (A,
# session 43's baseline, whose kernel sources are this tree's): which functions differ;
# (3) chunked decode rows (--decode-chunk 8192: a row reads its chunk's 8192 keys) beside
# unchunked rows of 8192 keys (the same bytes), same binary, A B order repeated.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s44/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
timeout 60 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlashDiag.*:CudaFlash.ChunkedLocalRun*' > $W/diag.txt 2>&1
echo "diag rc=$? ${SECONDS}s" >> $S; grep -vE "^\[ RUN|^\[----|^$" $W/diag.txt | head -60 >> $S; save
for v in A B; do
  bin=/tmp/z/attnkit; [ $v = A ] && bin=/tmp/z/attnkit_A
  cuobjdump -sass $bin > $W/sass_$v.txt 2>&1
  cuobjdump -res-usage $bin > $W/res_usage_$v.txt 2>&1
done
python3 - $W/sass_A.txt $W/sass_B.txt >> $S <<'PY'
import sys, re, hashlib
def funcs(path):
    out, name, body, arch = {}, None, [], ''
    for line in open(path, errors='replace'):
        m = re.match(r'\s*arch = (sm_\w+)', line)
        if m: arch = m.group(1)
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            if name: out[(arch, name)] = body
            name, body = m.group(1), []
            continue
        if name and '/*' in line:
            body.append(re.sub(r'/\*[0-9a-f]{4,}\*/', '', line).strip())
    if name: out[(arch, name)] = body
    return out
a, b = funcs(sys.argv[1]), funcs(sys.argv[2])
same = [k for k in a if k in b and a[k] == b[k]]
diff = [k for k in a if k in b and a[k] != b[k]]
print(f"SASS: A {len(a)} functions, B {len(b)}; identical {len(same)}; differing {len(diff)}; only in A {len(set(a)-set(b))}; only in B {len(set(b)-set(a))}")
for k in sorted(set(b) - set(a)): print("  only in B:", k[0], k[1][:120])
for k in diff[:20]: print("  differs:", k[0], k[1][:120], len(a[k]), len(b[k]))
PY
save
G=1x32768,16x32768,64x16384; P=1x8192,16x8192,64x8192
for round in 1 2; do
  [ $SECONDS -gt 380 ] && break
  timeout 170 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid $G --decode-chunk 8192 --out $W/chunk_r$round.jsonl > /dev/null 2> $W/chunk_r$round.err
  echo "bench chunk round $round rc=$? rows $(wc -l < $W/chunk_r$round.jsonl) ${SECONDS}s" >> $S; save
  [ $SECONDS -gt 420 ] && break
  timeout 170 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid $P --out $W/plain_r$round.jsonl > /dev/null 2> $W/plain_r$round.err
  echo "bench plain round $round rc=$? rows $(wc -l < $W/plain_r$round.jsonl) ${SECONDS}s" >> $S; save
done
cat $S
