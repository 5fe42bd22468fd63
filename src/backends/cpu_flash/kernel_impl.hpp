// The CPU_FLASH kernel body, compiled once per ISA: each kernel_<isa>.cpp defines a SIMD traits
// struct `Simd` (and, with bf16 dot products, `PathBf16`) in namespace
// attnkit::cpu_flash::ATTNKIT_ISA_NS, then includes this file.
//
// One work item = query rows (token x query head of one KV head) against a key range, tiled by
// kKeyTile keys with an online softmax. Decode-sized items (up to 16 or 32 rows: Path::few_max;
// head sizes in whole 2W-element steps, rows the SIMD loads convert) take the few-rows form
// (few_rows.hpp): K and V rows read where they lie, fp32 FMAs (PathBf16 where vdpbf16ps pays: its
// dot form, path_bf16.hpp), nothing packed. Larger items run both matrix products through one
// register-blocked micro-GEMM whose A operand is broadcast and B operand is loaded as vectors:
//   S[rows][keys] = Q[rows][d] x Kt[d][keys]      (K tile packed transposed once per tile,
//                                                   shared by every query head of the group)
//   O[rows][dv]  += P[rows][keys] x V[keys][dv]
// fp32 path: fp32 FMAs over any cache dtype; fp32/fp16/bf16/fp8 rows are converted as they load
// (K inside its transposes; V inside P.V's B loads for items of one register block, else into a
// tile once), nvfp4 rows through converted tiles.
// bf16 path (bf16 queries over a bf16 or fp8 cache, fp8 staged to bf16 rows): items above decode
// size multiply bf16 pairs on vdpbf16ps (P rounded to bf16) where that pays
// (CpuFlashOptions::bf16_dots), else take the fp32 path.
// AMX path, in blocks of 16 rows: scores read K rows as they lie in the cache (items of up to 128
// rows), and so does P.V for V rows (up to 32).
#pragma once

#include <array>
#include <cstring>
#include <type_traits>

#include "backends/cpu_flash/kernel.hpp"

namespace attnkit::cpu_flash::ATTNKIT_ISA_NS {

using F = Simd::F;
constexpr int W = Simd::W;
#ifdef ATTNKIT_CPU_FLASH_FEW_ROWS  // Simd has the form's reductions (AVX2, AVX-512)
#include "backends/cpu_flash/few_rows.hpp"
#endif

inline int round_up(int x, int m) { return (x + m - 1) / m * m; }

// GCC 12 dropped __builtin_prefetch in run_item_t; the asm form is always emitted.
inline void prefetch(const void* p) {
#if defined(__x86_64__)
  __asm__ volatile("prefetcht1 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

// Scalar lookup tables for the formats without a cheap vector conversion (nvfp4 codes and e4m3
// block scales).
struct Luts {
  float e4m3[256];
  float e2m1[16];
  Luts() {
    for (int i = 0; i < 256; ++i) e4m3[i] = fp8_e4m3_to_float(uint8_t(i));
    for (int i = 0; i < 16; ++i) e2m1[i] = e2m1_to_float(uint8_t(i));
  }
};
inline const Luts& luts() {
  static const Luts l;
  return l;
}

// The storage of a cache dtype: kAuto is the model dtype, and stays kAuto for fp32.
inline KvCacheDType stored_dtype(KvCacheDType dt, DType model) {
  if (dt != KvCacheDType::kAuto) return dt;
  return model == DType::kFloat16    ? KvCacheDType::kFloat16
         : model == DType::kBFloat16 ? KvCacheDType::kBFloat16
                                     : KvCacheDType::kAuto;
}

// Cache rows the fp32 path reads in place, converting exactly as it loads (fp8 scales are
// folded in by the caller, as for dequant_row).
enum class RowKind { kNone, kF32, kF16, kBf16, kE4m3, kE5m2 };
template <RowKind K>
using RowElem = std::conditional_t<
    K == RowKind::kF32, float,
    std::conditional_t<K == RowKind::kF16 || K == RowKind::kBf16, uint16_t, uint8_t>>;
template <RowKind K>
inline F load_row(const RowElem<K>* p) {
  if constexpr (K == RowKind::kF32)
    return Simd::load(p);
  else if constexpr (K == RowKind::kF16)
    return Simd::load_f16(p);
  else if constexpr (K == RowKind::kBf16)
    return Simd::load_bf16(p);
  else if constexpr (K == RowKind::kE4m3)
    return Simd::load_e4m3(p);
  else
    return Simd::load_e5m2(p);
}

// n elements (a multiple of W) of a row stored as K, as fp32.
template <RowKind K>
inline void convert_row(const void* src, int n, float* dst) {
  const auto* s = static_cast<const RowElem<K>*>(src);
  for (int i = 0; i < n; i += W) Simd::store(dst + i, load_row<K>(s + i));
}

// Stored value of one cache row as fp32 (per-tensor/per-head scales are applied by the caller;
// nvfp4 block scales here). n is a multiple of 16.
inline void dequant_row(KvCacheDType dt, DType model, const uint8_t* src, const uint8_t* bscale,
                        int n, float* dst) {
  switch (stored_dtype(dt, model)) {
    case KvCacheDType::kAuto:  // fp32
      std::memcpy(dst, src, size_t(n) * 4);
      return;
    case KvCacheDType::kFloat16:
      return convert_row<RowKind::kF16>(src, n, dst);
    case KvCacheDType::kBFloat16:
      return convert_row<RowKind::kBf16>(src, n, dst);
    case KvCacheDType::kFp8E4M3:
      return convert_row<RowKind::kE4m3>(src, n, dst);
    case KvCacheDType::kFp8E5M2:
      return convert_row<RowKind::kE5m2>(src, n, dst);
    case KvCacheDType::kNvfp4: {
      const Luts& t = luts();
      for (int g = 0; g < n / 16; ++g) {
        const float s = t.e4m3[bscale[g]];
        for (int i = 0; i < 8; ++i) {
          const uint8_t b = src[g * 8 + i];
          dst[g * 16 + 2 * i] = t.e2m1[b & 0xf] * s;
          dst[g * 16 + 2 * i + 1] = t.e2m1[b >> 4] * s;
        }
      }
      return;
    }
  }
}

inline void load_q_f32(const void* src, DType dt, int n, float* dst) {
  switch (dt) {
    case DType::kFloat32:
      std::memcpy(dst, src, size_t(n) * 4);
      return;
    case DType::kFloat16:
      return convert_row<RowKind::kF16>(src, n, dst);
    case DType::kBFloat16:
      return convert_row<RowKind::kBf16>(src, n, dst);
  }
}

// ---- micro-GEMM: C[M][N] (+)= A[M][K] (broadcast) x B[K][N] (vectors), N % W == 0 ----------
// B's rows: a packed tile at a fixed stride, or rows where they lie (row pointers).
template <class E>
struct StridedRows {
  const E* p;
  int64_t ld;
  const E* row(int k) const { return p + k * ld; }
  StridedRows col(int c) const { return {p + c, ld}; }
};
template <class E>
struct TableRows {
  const E* const* rows;
  int64_t c0;
  const E* row(int k) const { return rows[k] + c0; }
  TableRows col(int c) const { return {rows, c0 + c}; }
};

template <class Op, int MR, int NR, class BR>
inline void gemm_block(int K, const typename Op::A* A, int64_t lda, BR B, float* C, int64_t ldc,
                       bool load_c) {
  F acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j)
      acc[i][j] = load_c ? Simd::load(C + i * ldc + j * W) : Simd::zero();
  for (int k = 0; k < K; ++k) {
    typename Op::BVec b[NR];
    const typename Op::B* bk = B.row(k);
    for (int j = 0; j < NR; ++j) b[j] = Op::load_b(bk + j * W);
    for (int i = 0; i < MR; ++i) {
      const typename Op::AVec av = Op::bcast_a(A + i * lda + k);
      for (int j = 0; j < NR; ++j) acc[i][j] = Op::madd(acc[i][j], av, b[j]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) Simd::store(C + i * ldc + j * W, acc[i][j]);
}

template <class Op, int MR, class BR>
inline void gemm_rows(int mr, int nv, int K, const typename Op::A* A, int64_t lda, BR B, float* C,
                      int64_t ldc, bool load_c) {
  if constexpr (MR > 0) {
    if (mr != MR) return gemm_rows<Op, MR - 1>(mr, nv, K, A, lda, B, C, ldc, load_c);
    if (nv == Op::NR)
      gemm_block<Op, MR, Op::NR>(K, A, lda, B, C, ldc, load_c);
    else
      for (int j = 0; j < nv; ++j)
        gemm_block<Op, MR, 1>(K, A, lda, B.col(j * W), C + j * W, ldc, load_c);
  }
}

template <class Op, class BR>
inline void gemm(int M, int N, int K, const typename Op::A* A, int64_t lda, BR B, float* C,
                 int64_t ldc, bool load_c) {
  for (int n0 = 0; n0 < N; n0 += Op::NR * W) {
    const int nv = std::min(Op::NR, (N - n0) / W);
    for (int m0 = 0; m0 < M; m0 += Op::MR) {
      const int mr = std::min(Op::MR, M - m0);
      gemm_rows<Op, Op::MR>(mr, nv, K, A + m0 * lda, lda, B.col(n0), C + m0 * ldc + n0, ldc,
                            load_c);
    }
  }
}

// fp32 FMAs with B rows stored as K (fp32 for the packed tiles).
template <RowKind K>
struct OpF32From {
  using A = float;
  using B = RowElem<K>;
  using AVec = F;
  using BVec = F;
  static constexpr int MR = Simd::kMR, NR = Simd::kNR;
  static AVec bcast_a(const float* p) { return Simd::set1(*p); }
  static BVec load_b(const B* p) { return load_row<K>(p); }
  static F madd(F acc, AVec a, BVec b) { return Simd::fma(a, b, acc); }
};
using OpF32 = OpF32From<RowKind::kF32>;

// Whether S splits bf16 rows into even and odd dims in one load (load_bf16_even_odd), and the
// call (through a template, so that the few-rows loader names it only where it exists).
template <class S>
constexpr bool has_bf16_even_odd = requires(const uint16_t* s, typename S::F (&x)[2]) {
  S::load_bf16_even_odd(s, x);
};
template <class S, class E>
void bf16_even_odd(const E* p, typename S::F (&x)[2]) {
  S::load_bf16_even_odd(p, x);
}
// Likewise for 16 fp8 codes in dim order (load_e4m3_pair, load_e5m2_pair).
template <class S>
constexpr bool has_fp8_pairs = requires(const uint8_t* s, typename S::F (&x)[2]) {
  S::load_e4m3_pair(s, x);
  S::load_e5m2_pair(s, x);
};
template <class S, bool kE5m2, class E>
void fp8_pair(const E* p, typename S::F (&x)[2]) {
  if constexpr (kE5m2)
    S::load_e5m2_pair(p, x);
  else
    S::load_e4m3_pair(p, x);
}

// ---- fp32 path: any cache dtype, fp32 FMAs ------------------------------------------------
// fp32, fp16, bf16 and fp8 rows are read where they lie in the cache: K converted inside its
// transposes, V inside the P.V product's loads (with more rows than one register block, V's
// conversion would repeat per block: those rows are converted once into a tile instead). Copying
// each tile's rows first cost 11% of an fp32 prefill and most of a 16-bit decode's time
// (results/cpu_2026-11-30_s11_*).
struct PathF32 {
  using Op = OpF32;
  static constexpr int kPack = 1;  // values per A/B element
  static constexpr int kRowAlign = 1, kKeyAlign = W;
  static constexpr bool kDirectScores = false;
  // The few-rows form (few_rows.hpp) where Simd has its reductions: rows read in place as
  // RowPairs<kind> converts them, in dim order. Up to 16 rows: it converts K again for every 4
  // rows and V for every 8; over fp32 rows, 32 ran 1.08-1.15x the packed path's 8x2 block but
  // 0.96-0.99x its 6x4 block (results/cpu_2026-12-01_s23_few32_*).
#ifdef ATTNKIT_CPU_FLASH_FEW_ROWS
  static constexpr int kFewRows = 16;
#else
  static constexpr int kFewRows = 0;
#endif
  // bf16 rows in the few-rows form split into even and odd dims where Simd has that load
  // (load_bf16_even_odd: AVX2); Q is permuted alike once per item (few_q) and O's dims come out
  // permuted per 2W (few_unpermute_o).
  static constexpr bool kBf16EvenOdd = has_bf16_even_odd<Simd>;
  static constexpr bool kFewPermutesO = kBf16EvenOdd;
  static void gemm(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb,
                   float* C, int64_t ldc, bool load_c) {
    ATTNKIT_ISA_NS::gemm<Op>(M, N, K, A, lda, StridedRows<float>{B, ldb}, C, ldc, load_c);
  }
  // How rows of n elements are read in place (kNone: converted into a tile first).
  static RowKind row_kind(const AttentionArgs& a, int n) {
    switch (stored_dtype(a.kv.dtype, a.layer.dtype)) {
      case KvCacheDType::kAuto:
        return n * 4 <= kZeroRowBytes ? RowKind::kF32 : RowKind::kNone;
      case KvCacheDType::kFloat16:
        return n * 2 <= kZeroRowBytes ? RowKind::kF16 : RowKind::kNone;
      case KvCacheDType::kBFloat16:
        return n * 2 <= kZeroRowBytes ? RowKind::kBf16 : RowKind::kNone;
      case KvCacheDType::kFp8E4M3:
        return n <= kZeroRowBytes ? RowKind::kE4m3 : RowKind::kNone;
      case KvCacheDType::kFp8E5M2:
        return n <= kZeroRowBytes ? RowKind::kE5m2 : RowKind::kNone;
      default:
        return RowKind::kNone;
    }
  }
  static RowKind v_kind(const AttentionArgs& a, int dv, int m) {
    const RowKind k = row_kind(a, dv);
    return k == RowKind::kF32 || m <= Op::MR ? k : RowKind::kNone;
  }
  template <class Fn>
  static void with_kind(RowKind k, Fn&& fn) {
    switch (k) {
      case RowKind::kF32:
        return fn(std::integral_constant<RowKind, RowKind::kF32>{});
      case RowKind::kF16:
        return fn(std::integral_constant<RowKind, RowKind::kF16>{});
      case RowKind::kBf16:
        return fn(std::integral_constant<RowKind, RowKind::kBf16>{});
      case RowKind::kE4m3:
        return fn(std::integral_constant<RowKind, RowKind::kE4m3>{});
      case RowKind::kE5m2:
        return fn(std::integral_constant<RowKind, RowKind::kE5m2>{});
      case RowKind::kNone:
        return;
    }
  }
  static void load_q(const void* src, DType dt, int d, float* dst) { load_q_f32(src, dt, d, dst); }
  // dst[ntp][n]: the tile's rows as fp32, zero past nt (cache slots past the sequence are never
  // read).
  static void dequant_rows(const AttentionArgs& a, const CacheRows& rows, int n0, int nt, int ntp,
                           int n, float* dst) {
    for (int r = 0; r < ntp; ++r, dst += n) {
      if (r < nt)
        dequant_row(a.kv.dtype, a.layer.dtype, rows.row(n0 + r),
                    rows.scales ? rows.scale_row(n0 + r) : nullptr, n, dst);
      else
        std::memset(dst, 0, size_t(n) * 4);
    }
  }
  // Kt[d][ntp] from the rows row(n), n < ntp, stored as K.
  template <RowKind K, class Row>
  static void transpose_k(Row row, int ntp, int d, float* kt) {
    std::array<const RowElem<K>*, W> r{};
    for (int nb = 0; nb < ntp; nb += W) {
      for (int i = 0; i < W; ++i) r[i] = row(nb + i);
      for (int c = 0; c < d; c += W)
        Simd::transpose_rows([&](int i) { return load_row<K>(r[i] + c); },
                             reinterpret_cast<uint32_t*>(kt) + int64_t(c) * ntp + nb, ntp);
    }
  }
  // Kt[d][ntp] from the tile's rows (zero past nt).
  static void pack_k(const AttentionArgs& a, const CacheRows& rows, int n0, int nt, int ntp, int d,
                     float* stage, float* kt) {
    const RowKind kind = row_kind(a, d);
    with_kind(kind, [&](auto k) {
      constexpr RowKind kKind = decltype(k)::value;
      using E = RowElem<kKind>;
      transpose_k<kKind>(
          [&](int n) { return reinterpret_cast<const E*>(n < nt ? rows.row(n0 + n) : kZeroRow); },
          ntp, d, kt);
    });
    if (kind != RowKind::kNone) return;
    dequant_rows(a, rows, n0, nt, ntp, d, stage);
    transpose_k<RowKind::kF32>([&](int n) { return stage + int64_t(n) * d; }, ntp, d, kt);
  }
  // Vs[ntp][dv] for the P.V product of m rows; in place, the tile's row addresses instead
  // (gemm_v).
  static void pack_v(const AttentionArgs& a, const CacheRows& rows, int n0, int nt, int ntp, int dv,
                     int m, float*, float* vs) {
    const RowKind kind = v_kind(a, dv, m);
    with_kind(kind, [&](auto k) {
      using E = RowElem<decltype(k)::value>;
      const E** t = reinterpret_cast<const E**>(vs);
      for (int n = 0; n < ntp; ++n)
        t[n] = reinterpret_cast<const E*>(n < nt ? rows.row(n0 + n) : kZeroRow);
    });
    if (kind == RowKind::kNone) dequant_rows(a, rows, n0, nt, ntp, dv, vs);
  }
  // O[M][N] += P[M][K] x V[K][N] from pack_v's tile (pack_v had m = M).
  static void gemm_v(const AttentionArgs& a, int M, int N, int K, const float* P, int64_t ldp,
                     const float* vs, float* O) {
    const RowKind kind = v_kind(a, N, M);
    with_kind(kind, [&](auto k) {
      constexpr RowKind kKind = decltype(k)::value;
      using E = RowElem<kKind>;
      ATTNKIT_ISA_NS::gemm<OpF32From<kKind>>(
          M, N, K, P, ldp, TableRows<E>{reinterpret_cast<const E* const*>(vs), 0}, O, N, true);
    });
    if (kind == RowKind::kNone) gemm(M, N, K, P, ldp, vs, N, O, N, true);
  }
  static void store_p(const float* p, int n, float* dst) {
    if (p != dst) std::memcpy(dst, p, size_t(n) * 4);
  }
  using PElem = float;
  // The largest item the few-rows form takes over this call's rows (0: it does not read them in
  // place: nvfp4, or rows past the zero row's length).
  static int few_max(const AttentionArgs& a, bool /*bf16_dots*/) {
    return row_kind(a, a.layer.head_size) != RowKind::kNone &&
                   row_kind(a, a.layer.head_size_v) != RowKind::kNone
               ? kFewRows
               : 0;
  }
#ifdef ATTNKIT_CPU_FLASH_FEW_ROWS
  // 2W elements of a row stored as K, in dim order (bf16 with kBf16EvenOdd: even dims, then odd).
  template <RowKind K>
  struct RowPairs {
    using E = RowElem<K>;
    static constexpr int kVecs = 2;
    static void load(const E* p, F (&x)[2]) {
      if constexpr (K == RowKind::kBf16 && kBf16EvenOdd) {
        bf16_even_odd<Simd>(p, x);
      } else if constexpr ((K == RowKind::kE4m3 || K == RowKind::kE5m2) && has_fp8_pairs<Simd>) {
        fp8_pair<Simd, K == RowKind::kE5m2>(p, x);
      } else {
        x[0] = load_row<K>(p);
        x[1] = load_row<K>(p + W);
      }
    }
  };
  // The PathBf16 interface's dot form (vdpbf16ps) does not exist here.
  static bool few_dots(const AttentionArgs&, bool) { return false; }
  static int64_t few_tick_count(const AttentionArgs&, int nt, int dv, int rows_n, bool) {
    return few_fma_ticks(nt, dv, rows_n, 2);
  }
  static bool few_even_odd(const AttentionArgs& a) {
    return kBf16EvenOdd && row_kind(a, a.layer.head_size) == RowKind::kBf16;
  }
  // Q rows as the loader takes K: fp32 already, in dim order unless few_even_odd (then permuted
  // into qf, room for rows_n x d floats).
  static const void* few_q(const AttentionArgs& a, const float* qs, int rows_n, int d, float* qf,
                           bool) {
    if (!few_even_odd(a)) return qs;
    for (int64_t e = 0; e < int64_t(rows_n) * d; e += 2 * W)
      for (int i = 0; i < W; ++i) {
        qf[e + i] = qs[e + 2 * i];
        qf[e + W + i] = qs[e + 2 * i + 1];
      }
    return qf;
  }
  // One O row back into dim order after a few-rows item that permuted it.
  static void few_unpermute_o(const AttentionArgs& a, float* o, int dv, bool) {
    if (!few_even_odd(a)) return;
    for (int c = 0; c < dv; c += 2 * W) {
      float t[2 * W];
      std::memcpy(t, o + c, sizeof(t));
      for (int i = 0; i < W; ++i) {
        o[c + 2 * i] = t[i];
        o[c + 2 * i + 1] = t[W + i];
      }
    }
  }
  template <class Tick>
  static void few_scores(const AttentionArgs& a, const CacheRows& rows, int n0, int nt, int ntp,
                         int d, const void* q, int rows_n, float* s, Tick&& tick, bool) {
    with_kind(row_kind(a, d), [&](auto k) {
      scores_in_place<RowPairs<decltype(k)::value>>(rows, n0, nt, ntp, d,
                                                    static_cast<const float*>(q), rows_n, s, tick);
    });
  }
  template <class Tick>
  static void few_pv(const AttentionArgs& a, const CacheRows& rows, int n0, int nt, int dv,
                     float* p, int ntp, int rows_n, float* o, Tick&& tick, bool) {
    with_kind(row_kind(a, dv), [&](auto k) {
      pv_in_place<RowPairs<decltype(k)::value>>(rows, n0, nt, dv, p, ntp, rows_n, o, tick);
    });
  }
#endif
};

// The lines of a key range's K and V rows as byte runs, one per 4 KiB page they touch (rows of
// one block lie at a fixed stride, back to back in HND), issued as prefetches a slice at a time,
// so that the products of one tile go on while the next tile's lines arrive. The runs are walked
// together, kTurn lines of each in turn, not one after the other: every page's first lines then
// go out early, and the core's own prefetchers follow each page as a stream. Run by run a core
// kept about one page in flight (~10 GB/s; session 23). On a 2-vCPU VM, with the tile distance
// below, bf16 GQA 32/8 decode above L3 went from 0.65-0.72x to 0.80-0.91x of the read ceiling in
// four alternating rounds (results/cpu_2026-12-02_s31_prefetch_order_*, bench/NOTES.md).
class PrefetchCursor {
 public:
  void add(const CacheRows& rows, int64_t row_bytes, int from, int to) {
    for (int n = from, e; n < to; n = e) {
      e = std::min(to, (rows.block_of(n) + 1) * rows.block_size);
      const uint8_t* r = rows.row(n);
      if (rows.s_token == row_bytes) {
        push(r, int64_t(e - n) * row_bytes);
      } else {
        for (int i = n; i < e; ++i, r += rows.s_token) push(r, row_bytes);
      }
    }
  }
  // About `lines` more lines (at most kTurn - 1 over): kTurn of run cur_, then of the next run,
  // and so on. The slices of a tile (a tick's ~10-30 lines) go in turns of 4: in turns of 8 the
  // few-rows form's decode gained 3-6% over run-by-run order instead of 19-21% (three rounds);
  // bursts (issue_all) in turns of 8, fewer instructions a line.
  template <int kTurn>
  void issue(int64_t lines) {
    int cur = cur_, live = live_;
    const int n = n_;
    while (lines > 0 && live > 0) {
      Run& run = runs_[cur];
      const uint8_t* p = run.p;
      const int64_t left = run.left;
      if (left >= kTurn) {
        for (int i = 0; i < kTurn; ++i) prefetch(p + i * 64);
        run.p = p + kTurn * 64, run.left = left - kTurn, lines -= kTurn, left_ -= kTurn;
        if (left == kTurn) --live;
      } else if (left > 0) {
        for (int64_t i = 0; i < left; ++i) prefetch(p + i * 64);
        lines -= left, left_ -= left, run.left = 0, --live;
      }
      cur = cur + 1 == n ? 0 : cur + 1;
    }
    cur_ = cur, live_ = live;
  }
  // About `lines` more lines, the runs one after the other in the order they were added (the
  // lockstep items' address order, below).
  void issue_in_order(int64_t lines) {
    while (lines > 0 && next_ < n_) {
      Run& run = runs_[next_];
      const int64_t k = std::min(lines, run.left);
      for (int64_t i = 0; i < k; ++i) prefetch(run.p + i * 64);
      run.p += k * 64, run.left -= k, lines -= k, left_ -= k;
      if (run.left == 0) ++next_, --live_;
    }
  }
  // Every line not issued yet; the cursor is empty afterwards.
  void issue_all() {
    issue<8>(std::numeric_limits<int64_t>::max());
    n_ = cur_ = live_ = next_ = 0, lines_ = left_ = 0;
  }
  // Lines per slice when the runs are issued in `slices` parts.
  int64_t slice(int slices) const { return (lines_ + slices - 1) / slices; }
  // The same for the lines not issued yet.
  int64_t slice_of_rest(int slices) const { return (left_ + slices - 1) / slices; }

 private:
  struct Run {
    const uint8_t* p;  // the next line to issue
    int64_t left;      // lines not issued yet
  };
  void push(const uint8_t* p, int64_t bytes) {
    for (const uint8_t *end = p + bytes, *e; p < end; p = e) {
      const uintptr_t page_end = (reinterpret_cast<uintptr_t>(p) | uintptr_t(4095)) + 1;
      e = std::min(end, reinterpret_cast<const uint8_t*>(page_end));
      if (n_ == kMaxRuns) issue_all();  // only if one range were given more rows than a tile
      const auto* line =
          reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t(63));
      const int64_t n = (e - line + 63) / 64;
      runs_[n_++] = {line, n};
      lines_ += n, left_ += n;
      ++live_;
    }
  }
  // One tile of K and V rows: one run per row (NHD), or per page (HND); a run that crosses a
  // page boundary counts twice.
  static constexpr int kMaxRuns = 4 * kKeyTile;
  Run runs_[kMaxRuns];
  int n_ = 0, cur_ = 0, live_ = 0, next_ = 0;  // next_: issue_in_order's run
  int64_t lines_ = 0, left_ = 0;               // lines added, lines not issued yet
};

// Items the path's few-rows form takes: up to Path::few_max rows (by the cache's rows, and for
// PathBf16 by whether vdpbf16ps pays), head sizes in whole 2W-element steps.
template <class Path>
bool few_rows(const AttentionArgs& a, int rows, bool bf16_dots) {
  return rows <= Path::few_max(a, bf16_dots) && a.layer.head_size % (2 * W) == 0 &&
         a.layer.head_size_v % (2 * W) == 0;
}

// Returns false when the direct P.V path (allow_direct_pv) produced a NaN that the packed path
// would not (having written nothing of that KV head): the caller runs the item again without it.
// `bf16_dots`: as run_item's (the few-rows form's size limit on PathBf16).
template <class Path>
bool run_item_t(const AttentionArgs& a, const WorkItem& w, float* scratch, float* partials,
                bool bf16_dots, bool allow_direct_pv = false) {
  // Lockstep (several KV heads) is the few-rows form's; other forms run the heads in turn.
  if (w.heads > 1 &&
      !few_rows<Path>(a, round_up(item_head_rows(a, w), Path::kRowAlign), bf16_dots)) {
    for (int hh = 0; hh < w.heads; ++hh)
      if (!run_item_t<Path>(a, item_head(a, w, hh), scratch, partials, bf16_dots, allow_direct_pv))
        return false;
    return true;
  }
  using Op = typename Path::Op;
  using QE = typename Op::A;
  using KE = typename Op::B;
  constexpr int kPack = Path::kPack;
  const AttentionLayerParams& L = a.layer;
  const AttentionBatch& B = a.batch;
  const int g = L.num_heads / L.num_kv_heads;
  const int d = L.head_size, dv = L.head_size_v;
  const int q0 = B.cu_seqlens_q[w.seq];
  const int sq = B.cu_seqlens_q[w.seq + 1] - q0;
  const int sk = B.seqused_k[w.seq];
  const MmRanges mm = mm_ranges(B, w.seq);
  const int rows_n = item_rows(a, w);
  const int rows_c = round_up(rows_n, Path::kRowAlign);  // rows the GEMMs compute (AMX: 16)
  // KV heads in lockstep (WorkItem::heads): only on the few-rows form, rph rows each.
  const int heads = w.heads, rph = item_head_rows(a, w);
  const ScratchLayout sl(rows_c, d, dv);
  QE* qs = reinterpret_cast<QE*>(scratch + sl.q);
  float* stage = scratch + sl.stage;
  KE* kt = reinterpret_cast<KE*>(scratch + sl.kt);
  KE* vs = reinterpret_cast<KE*>(scratch + sl.vs);
  float* s = scratch + sl.s;
  typename Path::PElem* p = reinterpret_cast<typename Path::PElem*>(scratch + sl.p);
  float* o = scratch + sl.o;
  float* mrow = scratch + sl.m;
  // Row r's softmax denominator as W partial sums at lsum + r * kMaxLanes, reduced once at the
  // end: one horizontal sum a row per item, not a row per tile.
  static_assert(W <= kMaxLanes, "a row's partial sums fit its ScratchLayout::l slot");
  float* lsum = scratch + sl.l;

  // Rows: item_row's (KV head by KV head; in each, token t0 + i / g, query head i % g of it).
  // Every KV head of an item sees the same keys: its first head's rows give the range.
  int klo = sk, khi = -1;
  for (int r = 0; r < rows_n; ++r) {
    const auto [t, h] = item_row(a, w, r);
    const auto* src =
        static_cast<const uint8_t*>(a.q) +
        (int64_t(q0 + t) * a.q_stride_token + int64_t(h) * a.q_stride_head) * dtype_bytes(L.dtype);
    Path::load_q(src, L.dtype, d, qs + int64_t(r) * d / kPack);
    mrow[r] = kNegInf;
    Simd::store(lsum + int64_t(r) * kMaxLanes, Simd::zero());
    if (r % g == 0 && r < rph) {
      const RowRange rr = row_range(L, mm, t, sq, sk);
      if (rr.hi >= rr.lo) klo = std::min(klo, rr.lo), khi = std::max(khi, rr.hi);
    }
  }
  std::memset(o, 0, sizeof(float) * size_t(rows_c) * dv);
  if (rows_c > rows_n) {  // padding rows: zero queries (finite scores), ignored outputs
    std::memset(qs + int64_t(rows_n) * d / kPack, 0,
                sizeof(QE) * size_t(rows_c - rows_n) * d / kPack);
  }
  const int kb = std::max(w.k_begin, klo), ke = std::min(w.k_end, khi + 1);

  const KvCacheView& kv = a.kv;
  const int32_t* table = B.block_table + int64_t(w.seq) * B.block_table_stride;
  CacheRows krows{static_cast<const uint8_t*>(kv.k),
                  kv.stride_block,
                  kv.stride_head,
                  kv.stride_token,
                  kv.k_block_scales,
                  kv.sb_block,
                  kv.sb_head,
                  kv.sb_token,
                  table,
                  kv.block_size,
                  w.kv_head};
  CacheRows vrows = kv.v ? CacheRows{static_cast<const uint8_t*>(kv.v),
                                     kv.v_stride_block,
                                     kv.v_stride_head,
                                     kv.v_stride_token,
                                     kv.v_block_scales,
                                     kv.v_sb_block,
                                     kv.v_sb_head,
                                     kv.v_sb_token,
                                     table,
                                     kv.block_size,
                                     w.kv_head}
                         : krows;  // MLA: V is the first head_size_v elements of each latent K row
  // The rows and scales of the item's KV head hh (lockstep items switch between them).
  auto use_head = [&, first = w.kv_head](int hh) { krows.kv_head = vrows.kv_head = first + hh; };
  auto score_scale_of = [&](int hh) { return L.scale * kv_scale(kv, kv.k_scale, w.kv_head + hh); };
  float score_scale = score_scale_of(0);
  const float cap = L.logits_soft_cap;
  const F iota = Simd::iota();

  // Bytes of one K / V row, for prefetching the next tile: a tile spans a few 4 KiB pages of
  // the paged cache (one per block and head), where hardware prefetchers stop.
  const int64_t k_row_bytes = kv_bytes_per_head_vector(kv.dtype, L.dtype, d);
  const int64_t v_row_bytes = kv_bytes_per_head_vector(kv.dtype, L.dtype, dv);
  // Every item, prefill too: without them 16-token chunks over a 1 GB cache ran 8-10% slower
  // (64-token chunks 0-10%), while prefill in L3 moved by -1..+5% (session 11,
  // results/cpu_2026-11-30_s11_prefill_driver.txt).
  PrefetchCursor pf;
  // Keys [from, to) of the item's KV heads [h0, h1): block by block each head's K rows, then the
  // same for V (one head: its K runs, then its V runs).
  auto prefetch_tile = [&](int from, int to, int h0, int h1) {
    for (CacheRows* cr : {&krows, &vrows}) {
      if (cr == &vrows && !kv.v) break;
      const int64_t row_bytes = cr == &krows ? k_row_bytes : v_row_bytes;
      for (int n = from, e; n < to; n = e) {
        e = std::min(to, (cr->block_of(n) + 1) * cr->block_size);
        for (int hh = h0; hh < h1; ++hh) {
          cr->kv_head = w.kv_head + hh;
          pf.add(*cr, row_bytes, n, e);
        }
      }
    }
  };
  // Tiles end at multiples of kKeyTile (only the first one is short), so that every later tile
  // starts a 16-key group of the cache (the AMX direct-scores path needs that).
  auto tile_end = [&](int n0) { return std::min(ke, (n0 / kKeyTile + 1) * kKeyTile); };
  // One tile ahead: each tile's rows sit on 4 KiB pages of their own (a TLB walk each, and the
  // hardware prefetchers do not cross into them).
  // Issued at once, except on the few and sliced paths (below). Two tiles ahead had been the
  // rule while the pages went out one after the other; walked together (PrefetchCursor), one
  // tile ahead reads faster: on 2 vCPUs, three alternating rounds, bf16 GQA 32/8 decode +4-10%,
  // MHA +22%, three tiles ahead -3..-8% (results/cpu_2026-12-02_s31_prefetch_order_ab.jsonl.gz).
  // Lockstep items over HND caches on AMD cores (lockstep_prefetch_in_order) take the next tile
  // of all their heads at once, in address order (prefetch_tile over every head: a block's heads
  // lie back to back, one span), issued in order over the current tile's heads.
  // One head ahead, as the other items go, a thread's prefetches jumped a block stride between a
  // block's heads; in order, on a 2-vCPU Zen 4 VM over shuffled block tables, five alternating
  // rounds: bf16 GQA 32/8 decode +5-19% (page 16: 18.8 -> 22.3 GB/s), MHA +9%, fp16 +12%, fp8
  // +8-11%, ragged +11% (results/cpu_2026-12-03_s37_prefetch_address_order.jsonl.gz). On the
  // H200 host's 16 Intel cores (two heads an item there) MHA fell 129 -> 100 GB/s and fp16
  // 120 -> 111 in three rounds (results/cuda_s37_r1_*): its own prefetchers take over the runs
  // whose first lines the turns send early.
  const bool in_order = heads > 1 && lockstep_prefetch_in_order() && krows.s_token == k_row_bytes &&
                        (!kv.v || vrows.s_token == v_row_bytes);
  if (kb < ke) prefetch_tile(kb, tile_end(kb), 0, in_order ? heads : 1);
  pf.issue_all();
  // fp8 caches on the bf16 path: each tile's rows are first converted (exactly) to bf16 rows
  // in scratch, which then stand in for the cache (scales are folded into the score scale and
  // the output factor as on every path); the few-rows form converts them in registers instead.
  const bool staged = kPack == 2 && kv.dtype != KvCacheDType::kBFloat16;
  uint16_t* kst = reinterpret_cast<uint16_t*>(stage + int64_t(kKeyTile) * std::max(d, dv));
  uint16_t* vst = kst + int64_t(kKeyTile) * d;
  const CacheRows ks = dense_rows(reinterpret_cast<const uint8_t*>(kst), int64_t(d) * 2);
  const CacheRows vs_rows = dense_rows(reinterpret_cast<const uint8_t*>(vst), int64_t(dv) * 2);
  // Scores from K rows as they lie in the cache (AMX) for items of up to 128 rows (every item of
  // the bf16 path up to GQA 128), in blocks of 16 rows, one Q^T B tile each: later blocks find
  // the tile's K rows in L1, and no K tile is packed. P.V reads the cache's V rows too for up to
  // 32 rows; above that it would multiply V twice per block (even and odd dims), and packing V
  // once is cheaper. Against the packed path for all rows above 16, one thread in L2: GQA 17-32
  // decode +16-35%, GQA 48 +12-14%, GQA 71-128 +5-12%, MLA with 128 heads +18-20%; bf16 prefill
  // +10-18% on a 2-vCPU VM and +3-12% on 16 cores, where direct P.V at 64 rows lost 2-11%
  // (results/cpu_2026-11-30_s12_direct_blocks.txt).
  constexpr int kDirectRows = 128, kDirectPvRows = 32;
  bool direct = false;
  int blocks = 0;
  // Q^T of block b in the stage's first half (at most 8 blocks: 64 d floats of its 64 max(d, dv)).
  auto qt_of = [&](int b) {
    return reinterpret_cast<uint32_t*>(stage) + int64_t(b) * 16 * (d / 2);
  };
  if constexpr (Path::kDirectScores) {
    direct = rows_c <= kDirectRows && (staged || kv.block_size % 16 == 0);
    if (direct) {
      blocks = rows_c / 16;
      for (int b = 0; b < blocks; ++b)
        Path::pack_qt(qs + int64_t(b) * 16 * (d / 2), 16, d / 2, qt_of(b));
    }
  }
  // P.V from V rows as they lie in the cache (AMX, up to kDirectPvRows), block by block: O's dims
  // permuted.
  const bool direct_pv = allow_direct_pv && direct && dv % 32 == 0 && rows_c <= kDirectPvRows;
  // Decode-sized items (the few-rows form, few_rows.hpp): both products from the rows in place on
  // fp32 FMAs or vdpbf16ps (dots, below), the next tile's prefetches spread over them.
  const bool few = few_rows<Path>(a, round_up(rph, Path::kRowAlign), bf16_dots);
  // PathBf16's few-rows items on vdpbf16ps where it pays (path_bf16.hpp, the dot form).
  bool dots = false;
  if constexpr (Path::kFewRows > 0) dots = few && Path::few_dots(a, bf16_dots);
  // The form's Q rows as its loader takes them (PathBf16: converted into the stage's first
  // half where they are not as they lie), once per item.
  const void* qf = nullptr;
  if constexpr (Path::kFewRows > 0)
    if (few) qf = Path::few_q(a, qs, rows_n, d, stage, dots);
  uint32_t* ap = reinterpret_cast<uint32_t*>(kt);  // A tiles of P (kt is free on this path)
  uint16_t* vtail = reinterpret_cast<uint16_t*>(vs);
  constexpr size_t kApBytes = size_t(kKeyTile / 16) * 2 * 16 * 64;
  if (direct_pv) std::memset(ap, 0, kApBytes);

  // AMX tiles with P.V from the V rows in place (up to 32 rows): the next tile's prefetches in
  // slices too, spread over the blocks' tile products (below), instead of one burst that stalls
  // the core on full fill buffers (on 2 AMX vCPUs, three alternating rounds: the
  // 4-token GQA 32/4 row 10.0-10.6 -> 12.7-13.1 GB/s, split-KV 16/1 13.5-13.9 -> 17.0-17.8;
  // results/cpu_2026-12-02_s29_amx_slices_ab.jsonl).
  const bool sliced = !few && direct_pv;
  for (int n0 = kb, n1; n0 < ke; n0 = n1) {
    n1 = tile_end(n0);
    const int nt = n1 - n0;
    for (int hh = 0; hh < heads; ++hh) {  // one KV head's rows [rlo, rlo + rph) at a time
      const int rlo = hh * rph;
      if (!in_order) {
        pf.issue_all();
        // The next (tile, head): the tile's next head, or the next tile's first.
        if (hh + 1 < heads)
          prefetch_tile(n0, n1, hh + 1, hh + 2);
        else if (n1 < ke)
          prefetch_tile(n1, tile_end(n1), 0, 1);
      } else if (hh == 0) {
        pf.issue_all();
        if (n1 < ke) prefetch_tile(n1, tile_end(n1), 0, heads);
      }
      use_head(hh);
      score_scale = score_scale_of(hh);
      if (!few && !sliced) pf.issue_all();
      const int ntp = round_up(nt, Path::kKeyAlign);
      // few: the next tile's lines in slices, one per tick of the form (few_rows.hpp).
      int64_t slice = 0;
#ifdef ATTNKIT_CPU_FLASH_FEW_ROWS
      if (few) {
        const int ticks = int(Path::few_tick_count(a, nt, dv, rph, dots));
        slice = in_order ? pf.slice_of_rest((heads - hh) * ticks) : pf.slice(ticks);
      }
#endif
      // sliced: ticks only inside the tile products (PathAmx): per 32 keys x 64 dims of scores, per
      // 16 keys of A tiles, per 16 keys x 64 dims of P.V. Inside the products rather than one after
      // each (session 29), on 2 vCPUs, six alternating rounds: the 4-token GQA 32/4 row +11%,
      // split-KV 16/1 +6%, ragged 32/4 +8%. Then none in the softmax rows, whose ticks had come in
      // quick succession, and the products' ticks twice as dense, three rounds: split-KV 0.72 ->
      // 0.80x, ragged 0.78 -> 0.90x, 4-token 0.61 -> 0.66x of the read ceiling (medians); twice
      // denser again lost 1.7-3.4% (results/cpu_2026-12-02_s32_fp8_quad_ab.jsonl.gz, sets k, l).
      if (sliced)
        slice = pf.slice(blocks * ((ntp + 31) / 32 * ((d / 2 + 31) / 32) + (nt + 15) / 16 +
                                   (nt + 15) / 16 * ((dv + 63) / 64)));
      auto tick = [&] {
        if (in_order)
          pf.issue_in_order(slice);
        else
          pf.issue<4>(slice);
      };
      const CacheRows* kr = &krows;
      const CacheRows* vr = &vrows;
      int r0 = n0;  // first row index of the tile in *kr / *vr
      if constexpr (kPack == 2) {
        if (staged && !few) {  // the few-rows form reads fp8 rows in place
          Path::stage_rows(kv.dtype, krows, n0, nt, ntp, d, kst);
          Path::stage_rows(kv.dtype, vrows, n0, nt, ntp, dv, vst);
          kr = &ks, vr = &vs_rows, r0 = 0;
        }
      }
      if (!direct_pv && !few) Path::pack_v(a, *vr, r0, nt, ntp, dv, rows_c, stage, vs);
      if (few) {
        if constexpr (Path::kFewRows > 0)  // head hh's Q rows as few_q left them: bf16 words
          Path::few_scores(a, *kr, r0, nt, ntp, d,  // (dot form) or fp32
                           static_cast<const char*>(qf) + int64_t(rlo) * d * (dots ? 2 : 4), rph, s,
                           tick, dots);
      } else if (direct && r0 % 16 == 0) {
        if constexpr (Path::kDirectScores)
          for (int b = 0; b < blocks; ++b) {
            Path::direct_scores(*kr, r0, nt, ntp, d, qt_of(b), 16, s + int64_t(b) * 16 * ntp,
                                reinterpret_cast<float*>(p), tick);
          }
      } else {
        Path::pack_k(a, *kr, r0, nt, ntp, d, stage, kt);
        Path::gemm(rows_c, ntp, d / kPack, qs, d / kPack, kt, ntp, s, ntp, false);
        if (direct_pv) std::memset(ap, 0, kApBytes);  // pack_k used the A tiles' space
      }
      for (int r = rlo; r < rlo + rph; ++r) {  // item_row(a, w, r), without its two divisions
        const int t = w.t0 + (r - rlo) / g, h = (w.kv_head + hh) * g + (r - rlo) % g;
        const RowRange rr = row_range(L, mm, t, sq, sk);
        float* srow = s + int64_t(r - rlo) * ntp;
        const int lo = std::max(rr.lo, n0), hi = std::min(rr.hi, n0 + nt - 1);
        if (hi < lo) {  // nothing visible in this tile: p = 0
          std::memset(srow, 0, sizeof(float) * ntp);
          if (!direct_pv && !few) Path::store_p(srow, ntp, p + int64_t(r) * ntp);
          continue;
        }
        const bool full = lo == n0 && hi == n0 + ntp - 1;
        const float slope = L.alibi_slopes ? L.alibi_slopes[h] : 0.f;
        F mx = Simd::set1(kNegInf);
        for (int j = 0; j < ntp; j += W) {
          F x = Simd::mul(Simd::load(srow + j), Simd::set1(score_scale));
          if (cap > 0.f)
            x = Simd::mul(Simd::set1(cap), Simd::tanh(Simd::mul(x, Simd::set1(1.f / cap))));
          const F key = Simd::add(iota, Simd::set1(float(n0 + j)));
          if (L.alibi_slopes)  // -slope * |key - query position| (docs/semantics.md)
            x = Simd::fma(Simd::set1(-slope), Simd::abs(Simd::sub(key, Simd::set1(float(rr.pos)))),
                          x);
          if (!full) x = Simd::mask_range(key, float(lo), float(hi), x);
          Simd::store(srow + j, x);
          mx = Simd::max(mx, x);
        }
        const float m_old = mrow[r];
        const float m_new = std::max(m_old, Simd::hmax(mx));  // finite: this tile has a key
        // Once the row's maximum settles most tiles keep it: alpha is then exactly 1, no expf call
        // (one a row a tile).
        const float alpha = m_old == kNegInf ? 0.f : m_old == m_new ? 1.f : std::exp(m_old - m_new);
        F sum = Simd::zero();
        const F mv = Simd::set1(m_new);
        for (int j = 0; j < ntp; j += W) {
          const F e = Simd::exp(Simd::sub(Simd::load(srow + j), mv));
          Simd::store(srow + j, e);
          sum = Simd::add(sum, e);
        }
        if (!direct_pv && !few) Path::store_p(srow, ntp, p + int64_t(r) * ntp);
        float* lr = lsum + int64_t(r) * kMaxLanes;
        Simd::store(lr, Simd::fma(Simd::load(lr), Simd::set1(alpha), sum));
        mrow[r] = m_new;
        if (alpha != 1.f) {
          float* orow = o + int64_t(r) * dv;
          const F av = Simd::set1(alpha);
          for (int i = 0; i < dv; i += W)
            Simd::store(orow + i, Simd::mul(Simd::load(orow + i), av));
        }
      }
      if (direct_pv) {
        if constexpr (Path::kDirectScores)
          for (int b = 0; b < blocks; ++b) {
            const int rb = std::min(16, rows_n - 16 * b);
            Path::direct_pv(*vr, r0, nt, dv, s + int64_t(b) * 16 * ntp, ntp, rb, ap, vtail,
                            o + int64_t(b) * 16 * dv, tick);
          }
        continue;
      }
      if (few) {
        if constexpr (Path::kFewRows > 0)
          Path::few_pv(a, *vr, r0, nt, dv, s, ntp, rph, o + int64_t(rlo) * dv, tick, dots);
        continue;
      }
      if (rows_c > rows_n)  // padding rows of P: finite (zero), their outputs are never read
        std::memset(p + int64_t(rows_n) * ntp, 0,
                    sizeof(typename Path::PElem) * size_t(rows_c - rows_n) * ntp);
      if constexpr (requires { &Path::gemm_v; })
        Path::gemm_v(a, rows_c, dv, ntp, p, ntp, vs, o);
      else
        Path::gemm(rows_c, dv, ntp / kPack, reinterpret_cast<const QE*>(p), ntp / kPack, vs, dv, o,
                   dv, true);
    }
  }

  // A NaN or infinity in a V element meets a zero half of the A dwords on the direct path and
  // spreads to its neighbouring dim (0 x inf = NaN); per-element semantics need the packed path.
  if constexpr (Path::kDirectScores)
    if (direct_pv && Path::any_nan(o, rows_n * dv)) return false;
  for (int r = 0; r < rows_n; ++r) {
    const auto [t, h] = item_row(a, w, r);
    float* orow = o + int64_t(r) * dv;
    const float l = Simd::hsum(Simd::load(lsum + int64_t(r) * kMaxLanes));
    if constexpr (Path::kDirectScores)
      if (direct_pv) Path::unpermute_o(orow, dv);
    if constexpr (Path::kFewRows > 0 && Path::kFewPermutesO)
      if (few) Path::few_unpermute_o(a, orow, dv, dots);
    if (w.partial >= 0) {
      float* dst = partials + (w.partial + r) * int64_t(dv + 2);
      dst[0] = mrow[r];
      dst[1] = l;
      std::memcpy(dst + 2, orow, sizeof(float) * dv);
    } else {
      finalize_row(a, q0 + t, h, orow, mrow[r], l,
                   kv_scale(kv, kv.v ? kv.v_scale : kv.k_scale, h / g));
    }
  }
  return true;
}

inline void run_item(const AttentionArgs& a, const WorkItem& w, float* scratch, float* partials,
                     bool use_bf16, bool bf16_dots) {
#ifdef ATTNKIT_CPU_FLASH_BF16_PATH
  const int rows = item_head_rows(a, w);  // a lockstep item's forms go by one head's rows
  if (use_bf16 && (bf16_dots || few_rows<PathBf16>(a, rows, bf16_dots))) {
    run_item_t<PathBf16>(a, w, scratch, partials, bf16_dots);
    return;
  }
#endif
  run_item_t<PathF32>(a, w, scratch, partials, bf16_dots);
}

#ifdef ATTNKIT_CPU_FLASH_BF16_PATH
// PathBf16's micro-GEMM (declared in path_bf16.hpp, ahead of gemm).
void gemm_dispatch(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c) {
  gemm<OpBf16>(M, N, K, A, lda, StridedRows<uint32_t>{B, ldb}, C, ldc, load_c);
}
#endif

#ifdef ATTNKIT_CPU_FLASH_AMX_PATH
// AMX tiles for both products when the bf16 path applies and head_size % 32 == 0 (whole
// 32-element K steps), except items of up to kAmxFewRows rows, which take the few-rows form;
// otherwise run_item's choice. On the H200 host's CPU (AMX, 16 cores; two alternating rounds
// each, results/cuda_s21_r2_*, _r3_*) the form beat AMX up to 4 rows (GQA 32/8 87-116 GB/s
// against 73-90, MHA 89-95 against 62-68, level to +15% on 2 cores), at 16 rows it ran 30-50%
// slower. At 8 rows the form had the sliced prefetches (session 22) and AMX the burst; since
// AMX slices them too (session 29), 8-row items run faster on AMX on 2 AMX vCPUs (the ragged
// GQA 32/4 batch 13.1-13.4 -> 16.2-16.9 GB/s, two rounds; at 4 rows AMX stays slower: GQA 32/8
// 12.4-15.9 against 16.8-16.9, MHA 15.0-15.2 against 19.6-19.7;
// results/cpu_2026-12-02_s29_amx_few_rows_ab.jsonl). The host has not run the 8-row change.
constexpr int kAmxFewRows = 4;
inline void run_item_amx(const AttentionArgs& a, const WorkItem& w, float* scratch, float* partials,
                         bool use_bf16, bool bf16_dots) {
  const int rows = item_head_rows(a, w);  // a lockstep item's forms go by one head's rows
  if (use_bf16 && a.layer.head_size % 32 == 0 &&
      !(rows <= kAmxFewRows && few_rows<PathBf16>(a, rows, bf16_dots))) {
    amx_configure();
    if (!run_item_t<PathAmx>(a, w, scratch, partials, bf16_dots, true))
      run_item_t<PathAmx>(a, w, scratch, partials, bf16_dots, false);
    return;
  }
  run_item(a, w, scratch, partials, use_bf16, bf16_dots);
}
#endif

}  // namespace attnkit::cpu_flash::ATTNKIT_ISA_NS
