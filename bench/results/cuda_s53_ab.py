"""A/B/C table of session 53's call 2 (pass the unpacked tarball's folder): per decode row, us
per layer in the layer loop (each round) and single-call us (write protocol, medians) for every
side, each side's median over A's, and each side's fp8 gain (bf16 us over fp8 us, layer loop)."""
import collections, glob, json, statistics as st, sys

D = sys.argv[1] if len(sys.argv) > 1 else "."
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{D}/ab_*_*.jsonl")):
    side = f.split("/")[-1].split("_")[1]
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") != "decode":
            continue
        if not r.get("ok", False):
            print("NOT OK:", f, line.strip()[:300])
        k = (r["heads_q"], r["heads_kv"], r["batch"], r["seq_k"], r["page"], r["kv_dtype"])
        rows[k][side].append((r["ms_layer_loop"] * 1e3, r["ms"] * 1e3, r["splits"], r["check_rel_err"]))
sides = sorted({s for v in rows.values() for s in v})
med = lambda xs, i: st.median(x[i] for x in xs)
print("q/kv batch x keys page dtype | loop us per side (rounds) | loop / A | single us | single / A | splits | worst err")
for k in sorted(rows):
    v = rows[k]
    if any(not v[s] for s in sides):
        continue
    print(f"{k[0]}/{k[1]} {k[2]}x{k[3]} p{k[4]} {k[5]} | "
          + " ".join(f"{s} {','.join(f'{x[0]:.1f}' for x in v[s])}" for s in sides) + " | "
          + " ".join(f"{med(v[s], 0) / med(v['A'], 0):.3f}" for s in sides[1:]) + " | "
          + " ".join(f"{med(v[s], 1):.1f}" for s in sides) + " | "
          + " ".join(f"{med(v[s], 1) / med(v['A'], 1):.3f}" for s in sides[1:])
          + f" | {v['A'][0][2]} | {max(x[3] for s in sides for x in v[s]):.1e}")
print("\nfp8 gain (bf16 us / fp8 us, layer loop medians):")
for k in sorted(rows):
    f8 = k[:5] + ("fp8_e4m3",)
    if k[5] == "bfloat16" and f8 in rows:
        print(f"{k[0]}/{k[1]} {k[2]}x{k[3]} p{k[4]} | " + " | ".join(
            f"{s} {med(rows[k][s], 0) / med(rows[f8][s], 0):.3f}" for s in sides
            if rows[k][s] and rows[f8][s]))
