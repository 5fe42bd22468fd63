#!/usr/bin/env bash
# llama.cpp's CPU flash attention beside attnkit's CPU bench, in one command:
#
#   bash bench/peers_cpu.sh [--out DIR] [--quick] [--suite prefill|decode|mla|all]
#                           [--decode-grid G] [--decode-heads H] [--decode-head D] [--decode-q Q]
#
# (the --decode-* options pass to `attnkit bench`: the decode rows take those shapes)
#
# 1. Fetches llama.cpp's ggml: the source vendored in the llama-cpp-python 0.3.36 sdist on PyPI
#    (ggml 0.25.3, llama.cpp 0c1e570; sha256 pinned below), cached in $ATTNKIT_PEER_CACHE
#    (default ~/.cache/attnkit-peers), and builds it for this CPU (-march=native, OpenMP, no BLAS,
#    as llama.cpp builds its CPU backend).
# 2. Builds bench/peers_cpu/ggml_fa_peer.cpp against it.
# 3. Runs `attnkit bench --device cpu` ($ATTNKIT, else build/cpu's, built if absent), then the
#    peer on each of its prefill, decode and MLA decode rows' shapes (ragged batches and the
#    one-thread L2 rows aside), then prints the rows side by side.
# The peer keeps K/V contiguous per sequence and unpaged, in llama.cpp's default f16 cache (bf16
# caches also in bf16; fp8 rows in q8_0, ggml's 8-bit cache; float32 models over f32), with as
# many threads as attnkit's bench used. DIR (default bench/results/cpu_peers-<date>) receives
# attnkit.jsonl, the peer's shapes (shapes.txt), ggml.jsonl and side_by_side.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out="bench/results/cpu_peers-$(date -u +%Y-%m-%d_%H%M)"
bench_args=()
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --quick) bench_args+=(--quick); shift ;;
    --suite|--decode-grid|--decode-heads|--decode-head|--decode-q)
      bench_args+=("$1" "$2"); shift 2 ;;
    *) echo "peers_cpu.sh: unknown argument '$1' (expected --out DIR, --quick, --suite S," \
         "--decode-grid G, --decode-heads H, --decode-head D, --decode-q Q)" >&2
       exit 2 ;;
  esac
done
mkdir -p "$out"

cache="${ATTNKIT_PEER_CACHE:-$HOME/.cache/attnkit-peers}"
version=0.3.36
sha=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
sdist="$cache/llama_cpp_python-$version.tar.gz"
src="$cache/llama_cpp_python-$version/vendor/llama.cpp"
mkdir -p "$cache"
# A machine without network (the GPU host) takes a copy of $src made elsewhere.
if [[ ! -d "$src/ggml" ]]; then
  if [[ ! -f "$sdist" ]]; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
      echo "peers_cpu.sh: fetching llama.cpp's source needs pip (apt-get install python3-pip)" >&2
      exit 2
    fi
    python3 -m pip download "llama-cpp-python==$version" --no-deps --no-binary :all: -d "$cache"
  fi
  echo "$sha  $sdist" | sha256sum -c --quiet -
  tar xzf "$sdist" -C "$cache" "llama_cpp_python-$version/vendor/llama.cpp"
fi
build="$cache/ggml-build"
if [[ ! -f "$build/ggml/src/libggml-cpu.a" ]]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_BLAS=OFF \
    -DBUILD_SHARED_LIBS=OFF -DGGML_CCACHE=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target ggml
fi
peer="$build/ggml_fa_peer"
libs="$build/ggml/src"
g++ -std=c++20 -O2 -march=native -I"$src/ggml/include" bench/peers_cpu/ggml_fa_peer.cpp \
  "$libs/libggml.a" "$libs/libggml-cpu.a" "$libs/libggml-base.a" -fopenmp -lpthread -lm \
  -o "$peer"

attnkit="${ATTNKIT:-build/cpu/tools/attnkit/attnkit}"
if [[ ! -x "$attnkit" ]]; then
  bash scripts/build.sh cpu
fi
: > "$out/attnkit.jsonl"  # the bench appends to --out
"$attnkit" bench --device cpu "${bench_args[@]}" --out "$out/attnkit.jsonl" >/dev/null

# The peer's cache types for an attnkit row.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/peer_kv.py" <<'EOF'
def peer_kv(r):
    kv = {"bfloat16": ["f16", "bf16"], "float16": ["f16"], "fp8_e4m3": ["q8_0"],
          "fp8_e5m2": ["q8_0"]}.get(r["kv_dtype"])
    return kv or {"float32": ["f32"], "float16": ["f16"], "bfloat16": ["f16", "bf16"]}[r["dtype"]]
EOF
python3 - "$out/attnkit.jsonl" "$tmp/peer_kv.py" > "$out/shapes.txt" <<'EOF'
# attnkit rows -> the peer's shapes (kind,B,Q,K,H,HKV,D,kv_type,causal), one per line, deduplicated.
import json, sys
exec(open(sys.argv[2]).read())
seen = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("kind") not in ("prefill", "decode", "mla_decode") or "batch_lens" in r:
        continue
    d = str(r["head_size"])
    if r.get("head_size_v", r["head_size"]) != r["head_size"]:
        d += f'/{r["head_size_v"]}'
    for kv in peer_kv(r):
        s = f'{r["kind"]},{r["batch"]},{r["q_len"]},{r["kv_len"]},{r["heads"]},{r["kv_heads"]},' \
            f'{d},{kv},{int(r["causal"])}'
        if s not in seen:
            seen.append(s)
print("\n".join(seen))
EOF
threads=$(python3 -c "
import json,sys
print(next((json.loads(l)['threads'] for l in open(sys.argv[1]) if '\"threads\"' in l), 2))" \
  "$out/attnkit.jsonl")
mapfile -t shapes < "$out/shapes.txt"
"$peer" --threads "$threads" "${shapes[@]}" | tee "$out/ggml.jsonl"

python3 - "$out/attnkit.jsonl" "$out/ggml.jsonl" "$tmp/peer_kv.py" \
  > "$out/side_by_side.txt" <<'EOF'
# One line per attnkit row with the peer's figure on the same shape (GFLOP/s for prefill, GB/s
# of K/V for decode) and attnkit / peer.
import json, sys
exec(open(sys.argv[3]).read())
a = [json.loads(l) for l in open(sys.argv[1])]
g = [json.loads(l) for l in open(sys.argv[2])]
ceil = {r["name"]: r for r in a if r.get("kind") == "ceiling"}
print(f'sgemm {ceil["sgemm_fp32_openblas"]["gflops"]:.0f} GFLOP/s, '
      f'read {ceil["read_bw"]["gbs"]:.1f} GB/s (attnkit bench\'s ceilings, this run)')
def key(r):
    return (r["kind"], r["batch"], r["q_len"], r["kv_len"], r["heads"], r["kv_heads"],
            r["head_size"], bool(r["causal"]))
for r in a:
    if r.get("kind") not in ("prefill", "decode", "mla_decode") or "batch_lens" in r:
        continue
    unit = "gbs" if r["kind"] == "decode" else "gflops"  # MLA decode is bound by arithmetic
    peers = [p for p in g if key(p) == key(r) and p["kv_type"] in peer_kv(r)]
    cells = ", ".join(f'{p["kv_type"]} {p[unit]:.1f}{"" if p["verified"] else " (unverified)"}'
                      f' ({r[unit] / p[unit]:.2f}x)' for p in peers)
    print(f'{r["kind"]:10} {r["dtype"]:8}/{r["kv_dtype"]:8} B{r["batch"]} Q{r["q_len"]} '
          f'K{r["kv_len"]} {r["heads"]}/{r["kv_heads"]} d{r["head_size"]}/{r["head_size_v"]} '
          f'{"causal" if r["causal"] else "full"} page {r.get("page", "-")}: '
          f'attnkit {r[unit]:.1f} {unit}; llama.cpp {cells}')
EOF
cat "$out/side_by_side.txt"
