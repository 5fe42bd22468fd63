# Session 73 call 2: medians of side (e) over side (a) per row, from the call's JSON rows
# (prefill: TFLOPs; decode: ms_layer_loop, per layer in the layer loop). Usage: ab.py DIR, the
# folder call 2's all.tgz unpacks to; its output is cuda_2026-12-07_s73_ab.txt.
import glob, json, statistics, sys, collections
d = sys.argv[1]
def rows(pat):
    out = collections.defaultdict(list)
    for f in sorted(glob.glob(f"{d}/{pat}")):
        for line in open(f):
            r = json.loads(line)
            if r.get("kind") not in ("prefill", "decode") or r.get("impl") != "attnkit": continue
            key = (r["kind"], r["kv_dtype"], r["head_dim"], r["head_dim_v"], r["heads_q"], r["heads_kv"],
                   r["batch"], r["seq_q"], r["seq_k"], r["causal"], r["page"])
            assert r["ok"], (f, key)
            out[key].append(r["TFLOPs"] if r["kind"] == "prefill" else r["ms_layer_loop"] * 1e3)
    return out
for group in ("prefill_{}_r*.jsonl", "fp8prefill_{}_r*.jsonl", "decode*_{}_r*.jsonl"):
    a, e = rows(group.format("a")), rows(group.format("e"))
    print("==", group.format("*"))
    for k in sorted(a):
        ma, me = statistics.median(a[k]), statistics.median(e[k])
        ratio = me / ma if k[0] == "prefill" else ma / me  # >1: (e) faster
        unit = "TFLOP/s" if k[0] == "prefill" else "us/layer"
        print(f"{k[1]:9} d{k[2]}/{k[3]} {k[4]}/{k[5]} b{k[6]} q{k[7]} k{k[8]} {'causal' if k[9] else 'non-c '} "
              f"p{k[10]:<3} a {ma:8.2f} e {me:8.2f} {unit}  e/a {ratio:.3f} (n {len(a[k])},{len(e[k])})")
