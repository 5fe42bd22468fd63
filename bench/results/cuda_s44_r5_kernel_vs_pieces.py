#!/usr/bin/env python3
"""Session 44 run 5: decode rows of chunked layers (--decode-chunk 8192, 8192 keys a row) through
the decode form's kChunk kernels and as chunk pieces (ATTNKIT_CUDA_CHUNK_PIECES=1), beside
unchunked rows of 8192 keys, one binary, one pass each in turn. Per-layer time in the layer loop
(us) and each against the unchunked row; then the ranges by batch."""
import json, os, sys
base = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)) + '/cuda_s44_r5'
def rows(name):
    out = {}
    for line in open(f'{base}/{name}.jsonl'):
        x = json.loads(line)
        if x.get('kind') == 'decode':
            out[(x['kv_dtype'], x['heads_kv'], x['batch'], x['page'])] = x
    return out
k, p, pl = rows('kernel'), rows('pieces'), rows('plain')
print('every row verified:', all(k[x]['ok'] and p[x]['ok'] and pl[x]['ok'] for x in k))
by = {}
for key in sorted(k):
    a, b, c = (r[key]['ms_layer_loop'] * 1e3 for r in (k, p, pl))
    print(f'{key[0]:9s} {key[1]} {key[2]:3d} {key[3]:3d}: kChunk {a:6.1f}  pieces {b:6.1f}  plain {c:6.1f}'
          f'  kChunk/plain {a / c:.3f}  pieces/plain {b / c:.3f}')
    by.setdefault(key[2], []).append((a / c, b / c, a - c, b - c))
for batch, v in sorted(by.items()):
    f = lambda i: f'{min(x[i] for x in v):.3f}..{max(x[i] for x in v):.3f}'
    print(f'batch {batch}: kChunk/plain {f(0)}, pieces/plain {f(1)}; us over plain: kChunk {f(2)}, pieces {f(3)}')
