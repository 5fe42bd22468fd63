"""A/B table of s46 run 1 (cuda_s46_r1/): per decode row, us per layer in the layer loop and
single-call us (write protocol) for A (session 45's build) and B (fp8_decode_min_smem), both
rounds, and the B/A time ratio of the medians. Run from bench/results."""
import json, glob, statistics as st, collections
import sys
D = sys.argv[1] if len(sys.argv) > 1 else "cuda_s46_r1/"
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(D + "attnkit_*_r*.jsonl")):
    s, b = f.split("/")[-1].split("_")[1:3]
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") != "decode":
            continue
        k = (s, r["heads_q"], r["heads_kv"], r["head_dim"], r["batch"], r["seq_k"], r["kv_dtype"], r["page"])
        rows[k][b].append((r["ms_layer_loop"] * 1e3, r["ms"] * 1e3, r["splits"], r["GBps_layer_loop"]))
peers = {}
for f in glob.glob(D + "peers_*.jsonl"):
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") == "decode":
            peers[(r.get("heads_q"), r.get("heads_kv"), r.get("head_dim"), r.get("batch"), r.get("seq_k"), r.get("impl"))] = r
print("set q/kv head batch x keys dtype page | A loop us (r1,r2) | B loop us | B/A loop | A single | B single | B/A single | splits A,B | B GB/s loop")
for k in sorted(rows):
    a, b = rows[k]["a"], rows[k]["b"]
    la, lb = st.median(x[0] for x in a), st.median(x[0] for x in b)
    sa, sb = st.median(x[1] for x in a), st.median(x[1] for x in b)
    print(f"{k[0]} {k[1]}/{k[2]} d{k[3]} {k[4]}x{k[5]} {k[6]} p{k[7]} | "
          f"{','.join(f'{x[0]:.1f}' for x in a)} | {','.join(f'{x[0]:.1f}' for x in b)} | {lb/la:.3f} | "
          f"{sa:.1f} | {sb:.1f} | {sb/sa:.3f} | {a[0][2]},{b[0][2]} | {st.median(x[3] for x in b):.0f}")
print("\npeers (contiguous K/V, us; GB/s):")
for k, r in sorted(peers.items(), key=str):
    print(k, {x: (round(r[x] * 1e3, 1) if x.startswith("ms") else round(r[x])) for x in r if x.startswith(("ms", "GBps"))})
