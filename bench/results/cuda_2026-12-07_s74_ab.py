# Session 74: v2 prefill, medians of side (b) over side (a) per row, and each side against FA2
# and cuDNN from the same call's peer rows. Usage: ab.py DIR [SIDES], DIR the folder a call's
# all.tgz unpacks to (call 1 has side a only).
import glob, json, statistics, sys, collections
d, sides = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "a,b").split(",")
def key(r):
    return (r["head_dim"], r["batch"], r["seq_q"], r["causal"])
def rows(side):
    out = collections.defaultdict(list)
    for f in sorted(glob.glob(f"{d}/prefill_{side}_r*.jsonl")):
        for line in open(f):
            r = json.loads(line)
            if r.get("kind") != "prefill": continue
            assert r["ok"], (f, key(r))
            out[key(r)].append(r["TFLOPs"])
    return out
peer = collections.defaultdict(dict)
for line in open(f"{d}/peers_prefill.jsonl"):
    r = json.loads(line)
    if r.get("kind") == "prefill" and "TFLOPs" in r: peer[key(r)][r["impl"]] = r["TFLOPs"]
got = {s: rows(s) for s in sides}
for k in sorted(got[sides[0]]):
    med = {s: statistics.median(got[s][k]) for s in sides}
    line = f"d{k[0]:<3} b{k[1]:<2} s{k[2]:<5} {'causal' if k[3] else 'non-c '}"
    for s in sides:
        line += f"  {s} {med[s]:6.1f} ({min(got[s][k]):.0f}-{max(got[s][k]):.0f}, n {len(got[s][k])})"
    if len(sides) == 2: line += f"  {sides[1]}/{sides[0]} {med[sides[1]] / med[sides[0]]:.3f}"
    fa, cu = peer[k].get("flash"), peer[k].get("cudnn")
    line += f"  FA2 {fa:6.1f} cuDNN {cu:6.1f}" + "".join(f"  {s}/FA2 {med[s] / fa:.3f}" for s in sides)
    print(line)
