"""bench/README's session-46 table from run 2 (cuda_s46_r2/): per decode shape, the layer-loop us
of bf16 (B) and of fp8 under A (the floor at every launch) and B (fp8_decode_floor), ranges over
pages 16/64/128 and both rounds; fp8's time gain over bf16 at the same page; cuDNN's bf16 layer
loop (contiguous K/V) and the read ceiling's time for the fp8 bytes. Run from bench/results."""
import json, glob, collections
D = "cuda_s46_r2/"
t = collections.defaultdict(list)
dev = None
for f in glob.glob(D + "attnkit_*.jsonl"):
    b = f.split("_")[-2]
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") == "device":
            dev = r
        if r.get("kind") != "decode":
            continue
        k = (r["heads_q"], r["heads_kv"], r["head_dim"], r["batch"], r["seq_k"])
        t[k + (b, r["kv_dtype"], r["page"])].append(r["ms_layer_loop"] * 1e3)
        if b == "b" and r["kv_dtype"] != "bfloat16":
            t[k + ("bytes",)] = [r["ms_layer_loop"] * r["GBps_layer_loop"] * 1e6]
peer = {}
for f in glob.glob(D + "peers_*.jsonl"):
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") == "decode" and r.get("impl") == "cudnn":
            peer[(r["heads_q"], r["heads_kv"], r["head_dim"], r["batch"], r["seq_k"])] = r["ms_layer_loop"] * 1e3
rng = lambda v: f"{min(v):.1f}" if round(min(v), 1) == round(max(v), 1) else f"{min(v):.1f}-{max(v):.1f}"
rr = lambda v: f"{min(v):.2f}" if round(min(v), 2) == round(max(v), 2) else f"{min(v):.2f}-{max(v):.2f}"
print(f"read ceiling {dev['read_GBps']:.0f} GB/s")
print("| heads | d | batch x keys | bf16 | fp8 floor (A) | fp8 rule (B) | B / A | fp8 gain A | fp8 gain B | cuDNN bf16 | fp8 bytes at the ceiling |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for k in sorted({k[:5] for k in t}, key=lambda k: (k[2], k[0], k[1], k[3])):
    pages = (16, 64, 128)
    bf = [x for p in pages for x in t[k + ("b", "bfloat16", p)]]
    fa = [x for p in pages for x in t[k + ("a", "fp8_e4m3", p)]]
    fb = [x for p in pages for x in t[k + ("b", "fp8_e4m3", p)]]
    ba = [min(t[k + ("b", "fp8_e4m3", p)]) / min(t[k + ("a", "fp8_e4m3", p)]) for p in pages]
    ga = [min(t[k + ("b", "bfloat16", p)]) / min(t[k + ("a", "fp8_e4m3", p)]) for p in pages]
    gb = [min(t[k + ("b", "bfloat16", p)]) / min(t[k + ("b", "fp8_e4m3", p)]) for p in pages]
    c = peer.get(k)
    ceil = t[k + ("bytes",)][0] / dev["read_GBps"] / 1e3
    print(f"| {k[0]}/{k[1]} | {k[2]} | {k[3]}x{k[4]} | {rng(bf)} | {rng(fa)} | {rng(fb)} | {rr(ba)} | {rr(ga)} | {rr(gb)} | "
          f"{c:.1f} | {ceil:.1f} |" if c else
          f"| {k[0]}/{k[1]} | {k[2]} | {k[3]}x{k[4]} | {rng(bf)} | {rng(fa)} | {rng(fb)} | {rr(ba)} | {rr(ga)} | {rr(gb)} | - | {ceil:.1f} |")
