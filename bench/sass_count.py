#!/usr/bin/env python3
"""Static counts of v2's 16-bit prefill kernels, no GPU needed: compiles the kernels of the given
heads alone (explicit instantiations, the build's flags, sm_90a), disassembles them with nvdisasm
and prints one JSON row a kernel: registers, spill bytes, instructions, and the instructions on
each full-tile packed copy path (the block that tests `rows == 64`, from its label to the next
commit, LDGDEPBAR; the first is the prologue's, the second the loop's). A change's effect on the
code can then be read before any device time; whether it pays still takes a measurement.

The CUDA toolkit may lack nvdisasm; without --nvdisasm it is taken from PATH, the toolkit, or
PyPI's nvidia-cuda-nvdisasm wheel unpacked into .nvdisasm/ (ignored by git).
Usage: bench/sass_count.py [--root DIR] [--heads 80,96,128] [--label NAME] [--out FILE]
"""
import argparse, collections, glob, json, os, re, shutil, subprocess, sys, tempfile, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def find_nvdisasm(given):
    if given: return given
    for p in (shutil.which("nvdisasm"), "/usr/local/cuda/bin/nvdisasm"):
        if p and os.path.exists(p): return p
    d = os.path.join(os.path.dirname(HERE), ".nvdisasm")
    hits = glob.glob(f"{d}/**/bin/nvdisasm", recursive=True)
    if not hits:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "nvidia-cuda-nvdisasm", "-d", d], check=True)
        for w in glob.glob(f"{d}/*.whl"): zipfile.ZipFile(w).extractall(d)
        hits = glob.glob(f"{d}/**/bin/nvdisasm", recursive=True)
        os.chmod(hits[0], 0o755)
    return hits[0]


def compile_cubin(root, heads, work):
    tu = os.path.join(work, "probe.cu")
    with open(tu, "w") as f:
        f.write('#include "backends/cuda_flash/flash_fwd.cuh"\nnamespace attnkit::cuda_flash {\n')
        for h in heads:
            f.write(f"template __global__ void flash_fwd_kernel<{h}, {h}, __nv_bfloat16, false, "
                    "false>(const FlashParams);\n")
        f.write("}\n")
    cubin = os.path.join(work, "probe.cubin")
    r = subprocess.run([NVCC, "-cubin", "-O3", "-DNDEBUG", "-DATTNKIT_CUDA_FLASH_KERNELS=1",
                        "-DATTNKIT_WITH_CUDA=1", "--generate-code=arch=compute_90a,code=[sm_90a]",
                        "-lineinfo", "--expt-relaxed-constexpr", "-std=c++20",
                        "-Xptxas=-v,-warn-spills", f"-I{root}/include", f"-I{root}/src", "-o",
                        cubin, tu], capture_output=True, text=True)
    if r.returncode: sys.exit(r.stderr)
    usage, fn = {}, None  # ptxas -v: a "Compiling entry function" line, then its figures
    for line in r.stderr.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m: fn = m.group(1)
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and fn: usage.setdefault(fn, {}).update(spill_stores=int(m[1]), spill_loads=int(m[2]))
        m = re.search(r"Used (\d+) registers", line)
        if m and fn: usage.setdefault(fn, {})["registers"] = int(m[1])
    return cubin, usage


def kernels(sass):
    """{mangled name: [instruction or label, ...]} from nvdisasm -c."""
    out, cur = {}, None
    for line in sass.splitlines():
        if line.startswith(".text."):
            cur = out.setdefault(line[6:].rstrip(":"), [])
        elif cur is not None:
            m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(.*?)\s*;", line)
            if m: cur.append(m.group(1))
            elif line.startswith(".L_x"): cur.append(line.strip())
    return out


def copy_paths(code):
    """Instructions on each full-tile packed copy path: from the label above `ISETP.NE.AND P, PT,
    R, 0x40` to the next LDGDEPBAR, taking the branches a full tile takes (on !P) and not counting
    labels, convergence markers or never-executed `@!PT` padding."""
    labels = {l.rstrip(":"): i for i, l in enumerate(code) if l.startswith(".L_x")}
    paths = []
    for i0, l in enumerate(code):
        m = re.match(r"ISETP\.NE\.AND (P\d), PT, R\d+, 0x40, PT", l)
        if not m: continue
        p, i, ops = m[1], i0, collections.Counter()
        while not code[i].startswith(".L_x"): i -= 1
        i += 1
        while "LDGDEPBAR" not in code[i]:
            l = code[i]
            b = re.match(r"(@!?P\d )?BRA `\((\.L_x_\d+)\)", l)
            if b and (not b[1] or b[1].strip() == "@!" + p):
                i = labels[b[2]] + 1
                continue
            if not (b or l.startswith((".L_x", "BSYNC", "BSSY")) or l.startswith("@!PT ")):
                ops[l.split()[0].split(".")[0]] += 1
            i += 1
        paths.append({"instructions": sum(ops.values()), "by_opcode": dict(ops.most_common())})
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(HERE), help="source tree (default: this one)")
    ap.add_argument("--heads", default="80,96,128")
    ap.add_argument("--nvdisasm")
    ap.add_argument("--label", help="the tree's name in the rows (default: its commit, and"
                    " +uncommitted where it has changes)")
    ap.add_argument("--out")
    a = ap.parse_args()
    def git(*args):
        return subprocess.run(["git", "-C", a.root, *args], capture_output=True, text=True).stdout
    label = a.label or git("rev-parse", "--short", "HEAD").strip() + (
        "+uncommitted" if git("status", "--porcelain", "--untracked-files=no").strip() else "")
    heads = [int(h) for h in a.heads.split(",")]
    with tempfile.TemporaryDirectory() as work:
        cubin, usage = compile_cubin(a.root, heads, work)
        sass = subprocess.run([find_nvdisasm(a.nvdisasm), "-c", cubin], capture_output=True,
                              text=True, check=True).stdout
    rows = []
    for name, code in kernels(sass).items():
        head = int(re.search(r"flash_fwd_kernelILi(\d+)E", name)[1])
        n = sum(1 for l in code if not l.startswith(".L_x"))
        rows.append({"kind": "sass", "kernel": "flash_fwd_kernel", "form": "prefill", "head": head,
                     "dtype": "bfloat16", "arch": "sm_90a", "tree": label,
                     "instructions": n, **usage.get(name, {}), "copy_paths": copy_paths(code)})
    rows.sort(key=lambda r: r["head"])
    text = "".join(json.dumps(r) + "\n" for r in rows)
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "a") as f: f.write(text)


if __name__ == "__main__":
    main()
