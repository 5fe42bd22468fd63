#!/usr/bin/env python3
"""Peers of attnkit's CUDA benchmark, measured on the same GPU in the same command.

    python3 bench/peers_gpu.py --out bench/results/cuda_peers.jsonl [--quick] [--suite S]

Prints and writes JSON lines: first the device ceilings (device-to-device copy counting bytes read
plus written, a read-only streaming pass, an 8192^3 bf16 matrix product), then one row per peer
and shape. Peers are torch SDPA's CUDNN (cuDNN fused attention) and FLASH (PyTorch's
FlashAttention-2) backends; they take contiguous K/V (no paging, no fp8 KV), so their decode rows
are an upper bound for a paged kernel. Shapes match `attnkit bench --device cuda`:
  prefill: head 64/128/256 (--prefill-heads; qk/v pairs such as 192/128 too), S = 1k/4k/16k at
           16k tokens per batch, 2048/head heads, causal or not;
  decode: 32 query heads over 8 or 4 KV heads, head 128 (--decode-head), batch x context 1x32k,
          16x8k, 64x4k, 256x2k;
  encoder: 12 heads of 64 (BERT-base), bidirectional, batch x S 256x128, 64x512, 16x2048, 2x8192,
           q/k/v as an encoder layer's projection gives them ([B, S, H, D] viewed as [B, H, S, D]).
Protocol: CUDA events, 3 warm-ups, median of 20 (decode 50) runs, a 256 MiB buffer rewritten
before each run so nothing is served from L2, random normal inputs (never zeros). Decode rows are
also timed after reading that buffer instead (`ms_clean_l2`: L2 evicted but left clean, so no
write-back of the flush's dirty lines lands in the timed call), and per layer in a CUDA graph of
several layers' calls, each over its own K/V (`ms_layer_loop`, as `attnkit bench` times it: the
L2 holds the previous layers' clean lines, launches overlap the previous call's tail).
FLOPs = 4*B*H*Sq*Sk*D (halved for causal); decode bytes = K and V read = 2*B*Sk*Hkv*D*2.
"""
import argparse
import itertools
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

PEERS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


def median_ms(fn, reps, flush, clean=False):
    """clean: evict L2 by reading the 256 MiB buffer (L2 keeps clean lines, nothing to write
    back during the timed call) instead of rewriting it."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        if clean:
            flush.sum()
        else:
            flush.fill_(float(i))
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def ceilings(flush):
    n = 1 << 30  # 4 GiB of fp32
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    copy = median_ms(lambda: y.copy_(x), 10, flush)
    read = median_ms(lambda: x.sum(), 10, flush)
    del x, y
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    b = torch.randn_like(a)
    mm = median_ms(lambda: a @ b, 10, flush)
    return {"kind": "ceilings", "device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(), "copy_GBps": 2 * n * 4 / copy / 1e6,
            "read_GBps": n * 4 / read / 1e6, "bf16_mm_TFLOPs": 2 * 8192**3 / mm / 1e9}


def layer_loop_ms(layer_fns, reps, flush):
    """Per-layer milliseconds of one CUDA graph that runs every layer's call in turn."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture (workspaces, autotuning)
        for fn in layer_fns:
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for fn in layer_fns:
            fn()
    return median_ms(graph.replay, reps, flush, clean=True) / len(layer_fns)


def peer(name, fn, reps, flush, clean=False, layer_fns=None):
    try:
        with sdpa_kernel(PEERS[name]):
            row = {"ms": median_ms(fn, reps, flush)}
            if clean:
                row["ms_clean_l2"] = median_ms(fn, reps, flush, clean=True)
            if layer_fns:
                row["layers"] = len(layer_fns)
                try:
                    row["ms_layer_loop"] = layer_loop_ms(layer_fns, max(10, reps // 2), flush)
                except RuntimeError as e:  # the peer cannot be captured in a graph
                    row["layer_loop_error"] = str(e).splitlines()[0][:200]
            return row
    except RuntimeError as e:  # the peer refuses this shape
        return {"error": str(e).splitlines()[0][:200]}


def head_pairs(text):
    """'64,192/128' -> ((64, 64), (192, 128)): (qk, v) head sizes."""
    out = []
    for item in text.split(","):
        qk, _, v = item.partition("/")
        out.append((int(qk), int(v or qk)))
    return tuple(out)


def prefill(args, flush):
    for d, dv in args.prefill_heads:
        for s in ((1024, 4096) if args.quick else (1024, 4096, 16384)):
            for causal in (False, True):
                b, h = 16384 // s, 2048 // d
                q = torch.randn(b, h, s, d, dtype=torch.bfloat16, device="cuda")
                k = torch.randn_like(q)
                v = torch.randn(b, h, s, dv, dtype=torch.bfloat16, device="cuda")
                flops = 2 * b * h * s * s * (d + dv) / (2 if causal else 1)  # Q K^T and P V
                for name in PEERS:
                    row = {"impl": name, "kind": "prefill", "batch": b, "heads_q": h, "heads_kv": h,
                           "head_dim": d, "head_dim_v": dv, "seq_q": s, "seq_k": s,
                           "causal": causal}
                    row.update(peer(name, lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal), 20, flush))
                    if "ms" in row:
                        row["TFLOPs"] = flops / row["ms"] / 1e9
                    yield row
                del q, k, v


def encoder(args, flush):
    for b, s in ((64, 512),) if args.quick else ((256, 128), (64, 512), (16, 2048), (2, 8192)):
        h, d = 12, 64
        q, k, v = (torch.randn(b, s, h, d, dtype=torch.bfloat16, device="cuda").transpose(1, 2)
                   for _ in range(3))
        flops = 4 * b * h * s * s * d
        for name in PEERS:
            row = {"impl": name, "kind": "encoder", "batch": b, "heads_q": h, "heads_kv": h,
                   "head_dim": d, "seq_q": s, "seq_k": s, "causal": False}
            row.update(peer(name, lambda: F.scaled_dot_product_attention(q, k, v), 20, flush))
            if "ms" in row:
                row["TFLOPs"] = flops / row["ms"] / 1e9
            yield row
        del q, k, v


def decode_grid(text):
    """'1x32768,16x8192' -> ((1, 32768), (16, 8192)), as `attnkit bench --decode-grid` reads it."""
    grid = []
    for item in text.split(","):
        b, _, ctx = item.partition("x")
        if not (b.isdigit() and ctx.isdigit() and int(b) > 0 and int(ctx) > 0):
            raise argparse.ArgumentTypeError(
                f"decode grid entries are BATCHxCONTEXT with positive integers (got '{item}')")
        grid.append((int(b), int(ctx)))
    return tuple(grid)


def heads_list(text):
    """'32/8,32/32' -> ((32, 8), (32, 32)), as `attnkit bench --decode-heads` reads it."""
    heads = []
    for item in text.split(","):
        q, _, kv = item.partition("/")
        if not (q.isdigit() and kv.isdigit() and int(kv) > 0 and int(q) % int(kv) == 0):
            raise argparse.ArgumentTypeError(
                f"decode heads are QUERY/KV counts, the query count a multiple of the KV count "
                f"(got '{item}')")
        heads.append((int(q), int(kv)))
    return tuple(heads)


def decode(args, flush):
    grid = args.decode_grid or (((1, 32768), (64, 4096)) if args.quick else
                                ((1, 32768), (16, 8192), (64, 4096), (256, 2048)))
    for hq, hkv in args.decode_heads:
        for b, ctx in grid:
            d = args.decode_head
            q = torch.randn(b, hq, 1, d, dtype=torch.bfloat16, device="cuda")
            k = torch.randn(b, hkv, ctx, d, dtype=torch.bfloat16, device="cuda")
            v = torch.randn_like(k)
            nbytes = 2 * k.numel() * k.element_size()
            # attnkit's layer count: 4 GiB of K/V in all, 4 to 32 layers, within 80% of the free
            # memory (no loop below 2)
            layers = min(min(32, max(4, (4 << 30) // nbytes)),
                         torch.cuda.mem_get_info()[0] * 4 // 5 // nbytes)
            kvs = [(torch.randn_like(k), torch.randn_like(v)) for _ in range(layers)] \
                if layers >= 2 else []
            layer_fns = [lambda kk=kk, vv=vv: F.scaled_dot_product_attention(
                q, kk, vv, enable_gqa=True) for kk, vv in kvs]
            for name in PEERS:
                row = {"impl": name, "kind": "decode", "batch": b, "heads_q": hq, "heads_kv": hkv,
                       "head_dim": d, "seq_q": 1, "seq_k": ctx, "causal": False,
                       "kv_dtype": "bfloat16", "page": 0}
                row.update(peer(name, lambda: F.scaled_dot_product_attention(
                    q, k, v, enable_gqa=True), 50, flush, clean=True, layer_fns=layer_fns))
                if "ms" in row:
                    row["GBps"] = nbytes / row["ms"] / 1e6
                    row["GBps_clean_l2"] = nbytes / row["ms_clean_l2"] / 1e6
                if "ms_layer_loop" in row:
                    row["GBps_layer_loop"] = nbytes / row["ms_layer_loop"] / 1e6
                yield row
            del q, k, v, kvs, layer_fns


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--suite", choices=("all", "prefill", "decode", "encoder"), default="all")
    p.add_argument("--decode-head", type=int, default=128, help="head size of the decode rows")
    p.add_argument("--prefill-heads", type=head_pairs, default=((64, 64), (128, 128), (256, 256)),
                   help="head sizes of the prefill rows, comma-separated, qk/v for an asymmetric "
                        "pair (192/128: MLA's prefill; 2048 // qk heads)")
    p.add_argument("--decode-heads", type=heads_list, default=((32, 8), (32, 4)),
                   help="query/KV head counts of the decode rows, e.g. 32/8,32/32")
    p.add_argument("--decode-grid", type=decode_grid, default=None,
                   help="decode shapes as batch x context, e.g. 1x256,1x32768 (default: the "
                        "benchmark grid)")
    args = p.parse_args()
    flush = torch.empty(64 << 20, device="cuda")  # 256 MiB
    suites = [[ceilings(flush)]]
    if args.suite in ("all", "prefill"):
        suites.append(prefill(args, flush))
    if args.suite in ("all", "decode"):
        suites.append(decode(args, flush))
    if args.suite in ("all", "encoder"):
        suites.append(encoder(args, flush))
    with open(args.out, "w") as f:
        for row in itertools.chain(*suites):
            line = json.dumps(row)
            print(line, flush=True)
            f.write(line + "\n")
            f.flush()


if __name__ == "__main__":
    sys.exit(main())
