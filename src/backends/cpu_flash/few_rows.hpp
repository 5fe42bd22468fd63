// The few-rows form of the CPU_FLASH kernel: decode-sized work items read their K and V rows where
// they lie in the cache and multiply on fp32 FMAs, with nothing packed (kernel_impl.hpp decides
// which items take it). Included inside an ISA namespace after its `Simd` (which provides
// quad_sums, fold and the row-block sizes), by kernel_impl.hpp and ahead of PathBf16
// (path_bf16.hpp) in the bf16 variants (the includer provides <algorithm>, <cstring> and
// <type_traits>). A loader turns a step of a row into Load::kVecs vectors (Load::load): fp32 in
// dim order, or permuted (PathBf16, and PathF32's bf16 rows on AVX2: Q is converted alike, and O's
// dims come out permuted for the caller to restore, Path::kFewPermutesO); PathBf16's dot loaders
// give bf16 words that its own P.V and the scores here multiply on vdpbf16ps (MacOf).
#pragma once

// fn(std::integral_constant<int, n>) for a row count 1 <= n <= N known only at run time.
template <int N, class Fn>
inline void with_rows(int n, Fn&& fn) {
  if constexpr (N > 1)
    if (n < N) return with_rows<N - 1>(n, fn);
  fn(std::integral_constant<int, N>{});
}

// How a loader's vectors meet Q's: fp32 FMAs over Q rows as fp32 (FmaMac, every loader here), or
// the loader's own `Mac` (PathBf16's dot loaders: vdpbf16ps over Q rows as bf16 words).
template <class Load>
struct FmaMac {
  using QE = float;
  using X = typename Simd::F;
  static constexpr int kDims = Load::kVecs * Simd::W;  // dims per loader step
  static X q(const float* p, int i) { return Simd::load(p + i * Simd::W); }
  static typename Simd::F mac(typename Simd::F acc, X x, X q) { return Simd::fma(x, q, acc); }
};
template <class Load>
struct MacOfT {
  using type = FmaMac<Load>;
};
template <class Load>
requires requires { typename Load::Mac; }
struct MacOfT<Load> {
  using type = typename Load::Mac;
};
template <class Load>
using MacOf = typename MacOfT<Load>::type;

// x[r]: row r's dot products with keys k[0..3], as partial sums per 128-bit lane in key order
// (Simd::fold adds the lanes).
template <int RB, class Load, class Tick>
inline void quad_dots(const typename Load::E* const* k, int d, const typename MacOf<Load>::QE* q,
                      int64_t ldq, typename Simd::F (&x)[RB], Tick& tick) {
  using F = typename Simd::F;
  using M = MacOf<Load>;
  tick();
  constexpr int V = Load::kVecs;
  F acc[RB][4];
  for (int r = 0; r < RB; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = Simd::zero();
  for (int c = 0; c < d; c += M::kDims)
    for (int j = 0; j < 4; ++j) {
      typename M::X x[V];
      Load::load(k[j] + c, x);
      for (int r = 0; r < RB; ++r)
        for (int i = 0; i < V; ++i) acc[r][j] = M::mac(acc[r][j], x[i], M::q(q + r * ldq + c, i));
    }
  for (int r = 0; r < RB; ++r) x[r] = Simd::quad_sums(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
}

// s[r][0..W) = rows q[0..RB) . keys k[0..W).
template <int RB, class Load, class Tick>
inline void group_scores(const typename Load::E* const* k, int d, const typename MacOf<Load>::QE* q,
                         int64_t ldq, float* s, int64_t lds, Tick& tick) {
  using F = typename Simd::F;
  static_assert(Simd::W == 16 || Simd::W == 8);
  if constexpr (Simd::W == 16) {  // four quads, folded pairwise twice
    F y[2][RB];
    for (int h = 0; h < 2; ++h) {
      F x0[RB], x1[RB];
      quad_dots<RB, Load>(k + 8 * h, d, q, ldq, x0, tick);
      quad_dots<RB, Load>(k + 8 * h + 4, d, q, ldq, x1, tick);
      for (int r = 0; r < RB; ++r) y[h][r] = Simd::fold(x0[r], x1[r]);
    }
    for (int r = 0; r < RB; ++r) Simd::store(s + r * lds, Simd::fold(y[0][r], y[1][r]));
  } else {
    F x0[RB], x1[RB];
    quad_dots<RB, Load>(k, d, q, ldq, x0, tick);
    quad_dots<RB, Load>(k + 4, d, q, ldq, x1, tick);
    for (int r = 0; r < RB; ++r) Simd::store(s + r * lds, Simd::fold(x0[r], x1[r]));
  }
}

// The form calls tick() before each 4 keys of scores and each pv_tick_keys keys of a P.V pass, so
// that the caller can spread the next tile's prefetches evenly over the arithmetic. A few lines
// at a time they overlap it; 64 at a time (a tick per 16 keys or 32 dims) they did not: bf16 GQA
// 32/8 decode above L3 13.3-14.8 -> 17.6-20.1 GB/s on a 2-vCPU VM
// (results/cpu_2026-12-01_s22_ticks_ab.jsonl), and in a one-core loop over 4 KiB runs with 24-32
// FMAs a line, bursts of 64 prefetches ran 20-45% slower than 1-4 (_s22_prefetch_micro.txt).
// P.V's keys per tick for a block of `rows` rows: 16 from 8 rows up, else 8. The tick is a call,
// around which the block's accumulators (2 x rows vectors) are stored and reloaded; at 8 rows
// that costs more than sparser prefetch slices do, at fewer rows (MHA's one-row lockstep heads)
// the slices' spacing matters more. Against 8 keys for every block, call by call in one process
// on a 2-vCPU Zen 4 VM, three suite runs: split-KV 16/1 +12-22%, the ragged batch +3-9%, the
// 4-token row +3-8%, the rest level; 16 keys for every block cost MHA and bf16 GQA 32/8 page 128
// 3-5% (results/cpu_2026-12-04_s38_pv_tick_keys_in_process.jsonl.gz).
constexpr int pv_tick_keys(int rows) { return rows >= 8 ? 16 : 8; }
// P.V's row block for a loader of kVecs vectors: its accumulators stay at 2 x kFewPvRows.
constexpr int few_pv_rows(int vecs) { return Simd::kFewPvRows * 2 / vecs; }
// tick() calls per tile of nt keys, for rows_n rows and dv value dims, P.V taking pv_dims dims a
// step in blocks of pv_rows rows.
inline int64_t few_ticks(int nt, int dv, int rows_n, int pv_dims, int pv_rows) {
  constexpr int W = Simd::W;
  const int64_t scores = int64_t((nt + W - 1) / W) * (W / 4) *
                         ((rows_n + Simd::kFewScoreRows - 1) / Simd::kFewScoreRows);
  auto pv = [&](int rows) {  // one block's ticks
    const int keys = pv_tick_keys(rows);
    return int64_t(dv / pv_dims) * ((nt + keys - 1) / keys);
  };
  const int rest = rows_n % pv_rows;
  return scores + rows_n / pv_rows * pv(pv_rows) + (rest > 0 ? pv(rest) : 0);
}

// s[rows_n][ntp] for keys n0 .. n0 + nt (zero past nt: the softmax masks them) from Q rows q
// (row stride d; as MacOf<Load> takes them: fp32, converted as Load converts K, or bf16 words in
// Load's order).
template <class Load, class Tick>
inline void scores_in_place(const CacheRows& rows, int n0, int nt, int ntp, int d,
                            const typename MacOf<Load>::QE* q, int rows_n, float* s, Tick&& tick) {
  constexpr int W = Simd::W, RB = Simd::kFewScoreRows;
  using E = typename Load::E;
  for (int kg = 0; kg < ntp; kg += W) {
    if (kg >= nt) {
      for (int r = 0; r < rows_n; ++r) std::memset(s + int64_t(r) * ntp + kg, 0, W * 4);
      continue;
    }
    const E* k[W];
    const int in = std::min(W, nt - kg);
    rows.rows_from(n0 + kg, in, k);
    for (int i = in; i < W; ++i) k[i] = reinterpret_cast<const E*>(kZeroRow);
    for (int r0 = 0; r0 < rows_n; r0 += RB)
      with_rows<RB>(std::min(RB, rows_n - r0), [&](auto rb) {
        group_scores<decltype(rb)::value, Load>(k, d, q + int64_t(r0) * d, d,
                                                s + int64_t(r0) * ntp + kg, ntp, tick);
      });
  }
}

// O[R][dv] += P[R][nt] V[nt][dv] (P fp32, row stride ntp), kVecs x W dims at a time.
template <int R, class Load, class Tick>
inline void pv_rows(const typename Load::E* const* v, int nt, int dv, const float* p, int ntp,
                    float* o, Tick& tick) {
  using F = typename Simd::F;
  constexpr int W = Simd::W, V = Load::kVecs;
  for (int c = 0; c < dv; c += V * W) {
    F acc[R][V];
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < V; ++i) acc[r][i] = Simd::load(o + r * dv + c + i * W);
    for (int n0 = 0; n0 < nt; n0 += pv_tick_keys(R)) {
      tick();
      for (int n = n0; n < std::min(nt, n0 + pv_tick_keys(R)); ++n) {
        F x[V];
        Load::load(v[n] + c, x);
        for (int r = 0; r < R; ++r) {
          const F pr = Simd::set1(p[int64_t(r) * ntp + n]);
          for (int i = 0; i < V; ++i) acc[r][i] = Simd::fma(pr, x[i], acc[r][i]);
        }
      }
    }
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < V; ++i) Simd::store(o + r * dv + c + i * W, acc[r][i]);
  }
}

// Two of Load's steps as one (2 x kVecs vectors), for P.V blocks of few rows: each of a block's
// R x kVecs accumulators takes one FMA a key, and at 4 rows of two vectors those 8 chains wait
// on the FMA's latency (4 cycles at two a cycle on the cores measured).
template <class Load>
struct TwoSteps {
  using E = typename Load::E;
  static constexpr int kVecs = 2 * Load::kVecs;
  static void load(const E* p, typename Simd::F (&x)[kVecs]) {
    typename Simd::F a[Load::kVecs], b[Load::kVecs];
    Load::load(p, a);
    Load::load(p + Load::kVecs * Simd::W, b);
    for (int i = 0; i < Load::kVecs; ++i) x[i] = a[i], x[Load::kVecs + i] = b[i];
  }
};
// Whether P.V over rows_n rows of a loader of `vecs` vectors a step takes TwoSteps: where its one
// block would keep at most half the accumulators of a full block (2 x kFewPvRows). Call by call
// in one process, the 4-row bf16 item in L2: +4..+13% on a 2-vCPU Intel VM (model 207), +0..+8%
// on the H200 host's Intel cores; decode rows over DRAM level (bench/NOTES.md, session 42).
constexpr bool pv_two_steps(int rows_n, int vecs, int dv) {
  return rows_n * vecs <= Simd::kFewPvRows && dv % (2 * vecs * Simd::W) == 0;
}
// few_ticks for the FMA loaders of `vecs` vectors a step, as pv_in_place steps.
inline int64_t few_fma_ticks(int nt, int dv, int rows_n, int vecs) {
  const int step = pv_two_steps(rows_n, vecs, dv) ? 2 * vecs : vecs;
  return few_ticks(nt, dv, rows_n, step * Simd::W, few_pv_rows(step));
}

// O[rows_n][dv] += P V for the tile's V rows n0 .. n0 + nt, in blocks of few_pv_rows rows (one
// block of TwoSteps where pv_two_steps).
template <class Load, class Tick>
inline void pv_in_place(const CacheRows& rows, int n0, int nt, int dv, const float* p, int ntp,
                        int rows_n, float* o, Tick&& tick) {
  using E = typename Load::E;
  const E* v[kKeyTile];
  rows.rows_from(n0, nt, v);
  auto blocks = [&](auto ld) {
    using L = decltype(ld);
    constexpr int RB = few_pv_rows(L::kVecs);
    for (int r0 = 0; r0 < rows_n; r0 += RB)
      with_rows<RB>(std::min(RB, rows_n - r0), [&](auto rb) {
        pv_rows<decltype(rb)::value, L>(v, nt, dv, p + int64_t(r0) * ntp, ntp, o + int64_t(r0) * dv,
                                        tick);
      });
  };
  if (pv_two_steps(rows_n, Load::kVecs, dv))
    blocks(TwoSteps<Load>{});
  else
    blocks(Load{});
}
