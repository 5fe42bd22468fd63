"""Run 4 (cuda_s46_r4/): us per layer in the layer loop by --decode-occupancy (auto / floor / own),
both rounds, and the CTAs per SM each ran; then the Whisper batch-16 split sweep under the floor
and without it. Run from bench/results."""
import json, glob, collections
D = "cuda_s46_r4/"
t = collections.defaultdict(list)
per = {}
for f in glob.glob(D + "attnkit_*.jsonl"):
    occ = f.split("_")[-2]
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") != "decode":
            continue
        k = (r["heads_q"], r["heads_kv"], r["head_dim"], r["batch"], r["seq_k"], r["kv_dtype"], r["page"])
        t[k + (occ,)].append(r["ms_layer_loop"] * 1e3)
        per[k + (occ,)] = (r["decode_ctas_per_sm"], r["splits"], r["ok"])
print("shape | auto (per SM) | floor | own | auto / best of floor, own")
for k in sorted({k[:7] for k in t}):
    a, f, o = (t[k + (x,)] for x in ("auto", "floor", "own"))
    print(f"{k[0]}/{k[1]} d{k[2]} {k[3]}x{k[4]} {k[5]} p{k[6]} | {','.join(f'{x:.1f}' for x in a)} ({per[k + ('auto',)][0]}) | "
          f"{','.join(f'{x:.1f}' for x in f)} | {','.join(f'{x:.1f}' for x in o)} | {min(a) / min(min(f), min(o)):.3f}")
print("\nWhisper 20/20 d64 16x1500 split sweep, us per layer (loop), pages 16/64/128:")
for f in sorted(glob.glob(D + "sweep_*.jsonl")):
    rows = [json.loads(l) for l in open(f)]
    rows = [r for r in rows if r.get("kind") == "decode"]
    name = f.split("/")[-1][:-6]
    print(name, " ".join(f"{r['kv_dtype'][:4]}/p{r['page']}:{r['ms_layer_loop']*1e3:.1f}({r['decode_ctas_per_sm']})" for r in rows))
