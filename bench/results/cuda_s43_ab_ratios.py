# Session 43's A/B ratios (bench/NOTES.md, "Chunked local attention"), from the device runs'
# bench rows: python3 cuda_s43_ab_ratios.py (in bench/results; unpacks the runs' archives).
import glob, json, statistics, tarfile, tempfile

RUNS = {"r2 (B1)": "cuda_s43_r2_ab_per_key_chunk.tgz", "r3 (B2)": "cuda_s43_r3_ab_per_row_chunk.tgz",
        "r5 (B3)": "cuda_s43_r5_ab_fastdiv_chunk.tgz", "r7 (B0 control, B3)": "cuda_s43_r7_control_b0_sass.tgz",
        "r8 (B4)": "cuda_s43_r8_ab_noinline_chunk.tgz"}


def load(d, kind, v, field):
    rows = {}
    for f in glob.glob(f"{d}/{kind}_{v}_r*.jsonl"):
        for line in open(f):
            r = json.loads(line)
            if r.get("kind") != kind:
                continue
            key = (r["batch"], r["seq_q"], r["seq_k"], r["heads_q"], r["heads_kv"], r["head_dim"],
                   r["kv_dtype"], r["page"], r["causal"])
            rows.setdefault(key, []).append(r[field])
    return {k: statistics.median(v) for k, v in rows.items()}


for name, archive in RUNS.items():
    d = tempfile.mkdtemp()
    tarfile.open(archive).extractall(d)
    A = load(d, "decode", "A", "ms_layer_loop")
    for v in ["B0", "B"]:
        B = load(d, "decode", v, "ms_layer_loop")
        if not B:
            continue
        fp8 = [B[k] / A[k] for k in A if k[0] == 1 and k[2] == 32768 and k[6] == "fp8_e4m3"]
        rest = [B[k] / A[k] for k in A if not (k[0] == 1 and k[2] == 32768 and k[6] == "fp8_e4m3")]
        print(f"{name} {v}/A decode layer loop: fp8 1x32k {min(fp8):.3f}..{max(fp8):.3f}, "
              f"other {len(rest)} rows {min(rest):.3f}..{max(rest):.3f}")
    PA, PB = load(d, "prefill", "A", "ms"), load(d, "prefill", "B", "ms")
    if PB:
        c = [PB[k] / PA[k] for k in PA if k[8]]
        n = [PB[k] / PA[k] for k in PA if not k[8]]
        print(f"{name} B/A prefill: causal {min(c):.3f}..{max(c):.3f}, "
              f"non-causal {min(n):.3f}..{max(n):.3f}")
