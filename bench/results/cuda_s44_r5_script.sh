#!/bin/bash
# s44 device run 5: the decode form's kChunk kernels (chunked local decode batches at head 128
# take the chunk in the kernel; other batches stay chunk pieces). SASS of every kernel against
# 77c1fbb's build (A: session 43's baseline) by instruction bodies (the added template argument
# renames every kernel); the chunked tests both ways (and under memcheck, racecheck, initcheck);
# the CUDA_FLASH conformance cells; decode rows chunked through the kernels, chunked as pieces
# (ATTNKIT_CUDA_CHUNK_PIECES=1) and unchunked over the same keys, one binary, in turn; then every
# CudaFlash / CudaMla GPU test.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s44/bin5.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; cp $W/*.jsonl $W/*.txt $OUT/ 2>/dev/null; rm -f $OUT/sass_*.txt; }
T=/tmp/z/attnkit_test_backends
timeout 150 $T --gtest_filter='CudaFlash.Chunked*:CudaFlashHost.Chunk*:CudaFlashDeclaration.Chunk*' > $W/chunk_tests.txt 2>&1
echo "chunk tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|^\[       OK|FAILED  \]' $W/chunk_tests.txt | tr '\n' ';') ${SECONDS}s" >> $S
for tool in memcheck racecheck initcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='CudaFlash.ChunkedLocalRun*' > $W/sanitizer_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  PASSED|^\[  FAILED' $W/sanitizer_$tool.txt | tr '\n' ';') ${SECONDS}s" >> $S
done
save
for v in A B; do
  bin=/tmp/z/attnkit; [ $v = A ] && bin=/tmp/z/attnkit_A
  cuobjdump -sass $bin > $W/sass_$v.txt 2>&1
done
python3 - $W/sass_A.txt $W/sass_B.txt >> $S <<'PY'
import sys, re, hashlib, collections
def funcs(path):
    out, name, body, arch = [], None, [], ''
    for line in open(path, errors='replace'):
        m = re.match(r'\s*arch = (sm_\w+)', line)
        if m: arch = m.group(1)
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            if name: out.append((arch, name, hashlib.sha1('\n'.join(body).encode()).hexdigest(), len(body)))
            name, body = m.group(1), []
            continue
        if name and '/*' in line:
            body.append(re.sub(r'/\*[0-9a-f]{4,}\*/', '', line).strip())
    if name: out.append((arch, name, hashlib.sha1('\n'.join(body).encode()).hexdigest(), len(body)))
    return out
a, b = funcs(sys.argv[1]), funcs(sys.argv[2])
bb = collections.Counter((x[0], x[2]) for x in b)
found = 0
missing = []
for x in a:
    if bb[(x[0], x[2])] > 0: bb[(x[0], x[2])] -= 1; found += 1
    else: missing.append(x)
print(f"SASS bodies: A {len(a)} functions, B {len(b)}; A's found in B: {found}; missing {len(missing)}; B's bodies not in A: {sum(bb.values())}")
for x in missing[:10]: print("  A body not in B:", x[0], x[1][:140], x[3])
extra = [x for x in b if bb[(x[0], x[2])] > 0]
names = collections.Counter(re.sub(r'_ZN7attnkit10cuda_flash(\d+)', '', x[1])[:60] for x in b)
print("  B functions with 'chunk' in the name:", sum(1 for x in b if 'Lb1EEEvNS0_11FlashParams' in x[1] or 'chunk_batch' in x[1]))
PY
save
timeout 120 /tmp/z/attnkit_test_conformance --gtest_filter='*CUDA_FLASH*' > $W/conformance.txt 2>&1
echo "conformance rc=$? $(grep -E 'conformance:|^\[  PASSED|^\[  FAILED' $W/conformance.txt | cut -c1-200 | tr '\n' ';') ${SECONDS}s" >> $S
save
G=1x32768,16x32768,64x16384; P=1x8192,16x8192,64x8192
timeout 100 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid $G --decode-chunk 8192 --out $W/kernel.jsonl > /dev/null 2> $W/kernel.err
echo "bench chunk kChunk kernels rc=$? rows $(wc -l < $W/kernel.jsonl) ${SECONDS}s" >> $S; save
ATTNKIT_CUDA_CHUNK_PIECES=1 timeout 100 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid $G --decode-chunk 8192 --out $W/pieces.jsonl > /dev/null 2> $W/pieces.err
echo "bench chunk pieces rc=$? rows $(wc -l < $W/pieces.jsonl) ${SECONDS}s" >> $S; save
timeout 100 /tmp/z/attnkit bench --device cuda --suite decode --decode-grid $P --out $W/plain.jsonl > /dev/null 2> $W/plain.err
echo "bench plain rc=$? rows $(wc -l < $W/plain.jsonl) ${SECONDS}s" >> $S; save
timeout $((585 - SECONDS)) $T --gtest_filter='CudaFlash*:CudaMla*' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran|FAILED  \]' $W/cuda_tests.txt | head -8 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
