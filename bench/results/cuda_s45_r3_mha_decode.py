#!/usr/bin/env python3
"""Tables of session 45's run 3 (MHA decode rows beside 32/8, and the peers), from its JSON lines:
python3 bench/results/cuda_s45_r3_mha_decode.py bench/results/cuda_s45_r3"""
import collections, glob, json, sys

rows = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + "/*.jsonl")):
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") != "decode":
            continue
        assert r.get("ok", True), r
        key = (r["heads_q"], r["heads_kv"], r["head_dim"], r["batch"], r["seq_k"])
        rows[key].append(r)


def rng(vals, fmt="{:.0f}"):
    return (fmt + "-" + fmt).format(min(vals), max(vals)) if vals else "-"


print("| heads | d | batch x keys | attnkit bf16 | cuDNN | FA2 | attnkit / cuDNN | per layer: attnkit / cuDNN | fp8 GB/s | fp8 time gain |")
print("|---|---|---|---|---|---|---|---|---|---|")
for key in sorted(rows, key=lambda k: (k[2], k[0], k[1], k[3])):
    rs = rows[key]
    ours = [r for r in rs if r["impl"] == "attnkit" and r["kv_dtype"] == "bfloat16"]
    f8 = [r for r in rs if r["impl"] == "attnkit" and r["kv_dtype"] == "fp8_e4m3"]
    cud = [r for r in rs if r["impl"] == "cudnn"]
    fa = [r for r in rs if r["impl"] == "flash"]
    g = lambda s, f: [r[f] for r in s]
    ratio = [a / c for a in g(ours, "GBps") for c in g(cud, "GBps")]
    ratio_loop = [a / c for a in g(ours, "GBps_layer_loop") for c in g(cud, "GBps_layer_loop")]
    # fp8 reads half the bytes: time gain = bf16 time / fp8 time, page by page (layer loop).
    gain = [b["ms_layer_loop"] / e["ms_layer_loop"] for b in ours for e in f8 if b["page"] == e["page"]]
    print(f"| {key[0]}/{key[1]} | {key[2]} | {key[3]}x{key[4]} | {rng(g(ours, 'GBps'))} | "
          f"{rng(g(cud, 'GBps'))} | {rng(g(fa, 'GBps'))} | {rng(ratio, '{:.2f}')} | "
          f"{rng(ratio_loop, '{:.2f}')} | {rng(g(f8, 'GBps'))} | {rng(gain, '{:.2f}')} |")
