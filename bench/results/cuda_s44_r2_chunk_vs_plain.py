#!/usr/bin/env python3
"""Session 44 run 2: chunked decode rows (--decode-chunk 8192, each row reads its chunk's 8192
keys) beside unchunked rows of 8192 keys (the same bytes), same binary, two rounds. Prints, per
(kv dtype, KV heads, batch, page), the per-layer time of each (layer loop, us) and the chunked /
plain ratio of both rounds, then the ranges; and whether every row verified."""
import json, sys, os
base = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)) + '/cuda_s44_r2'
def rows(name):
    out = {}
    for line in open(f'{base}/{name}.jsonl'):
        x = json.loads(line)
        if x.get('kind') != 'decode':
            continue
        out[(x['kv_dtype'], x['heads_kv'], x['batch'], x['page'])] = x
    return out
ok = True
ratios = {}
for r in (1, 2):
    ch, pl = rows(f'chunk_r{r}'), rows(f'plain_r{r}')
    for k in ch:
        ok &= ch[k]['ok'] and pl[k]['ok']
        ratios.setdefault(k, []).append((ch[k]['ms_layer_loop'] * 1e3, pl[k]['ms_layer_loop'] * 1e3,
                                         ch[k]['ms_graph_clean_l2'] * 1e3, pl[k]['ms_graph_clean_l2'] * 1e3))
print('kv, hkv, batch, page: layer loop us chunked/plain (ratio) per round | graph clean-L2 us chunked/plain')
by = {}
for k in sorted(ratios):
    cells = ' '.join(f'{c:.1f}/{p:.1f} ({c / p:.3f})' for c, p, _, _ in ratios[k])
    g = ' '.join(f'{c:.1f}/{p:.1f}' for _, _, c, p in ratios[k])
    print(f'{k[0]:9s} {k[1]} {k[2]:3d} {k[3]:3d}: {cells} | {g}')
    by.setdefault((k[0], k[2]), []).extend(c / p for c, p, _, _ in ratios[k])
    by.setdefault(('diff_us', k[2]), []).extend(c - p for c, p, _, _ in ratios[k])
for k, v in sorted(by.items(), key=str):
    print(k, f'{min(v):.3f}..{max(v):.3f}')
print('every row verified:', ok)
