// AVX-512 variant with AVX512_BF16 (Cooper Lake, Sapphire Rapids, Zen 4+): the fp32 path plus a
// bf16 path for bf16 queries over a bf16 or fp8 cache. Its decode-sized items take the few-rows
// form on fp32 FMAs over bf16 rows (fp8 rows converted in registers), larger ones run both products
// on vdpbf16ps (32 bf16 multiply-adds per instruction into fp32) where that instruction issues fast
// enough (bf16_dots_pay), else the fp32 path. With AMX (Sapphire Rapids+) larger items run both
// products on AMX tiles (the kAmxBf16 variant; the OS must grant the tile state).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <type_traits>

#include "backends/cpu_flash/kernel.hpp"

#if defined(__x86_64__)
#include <immintrin.h>  // before the namespace that includes simd_avx512.hpp

namespace attnkit::cpu_flash::isa_avx512_bf16 {
#include "backends/cpu_flash/simd_avx512.hpp"
// few_rows.hpp needs Simd
#include "backends/cpu_flash/few_rows.hpp"

// vdpbf16ps does twice an FMA's multiply-adds, but cores differ in how fast they issue it: 1.3 G/s
// against 5.3 G/s for FMAs on Intel model 207 (results/cpu_2026-12-01_s21_dpbf16_vs_fma.txt),
// where bf16 prefill ran at 107-123 GFLOP/s through it and 117-173 on fp32 FMAs
// (cpu_2026-12-01_s21_bf16_dots_ab.jsonl). The rates are measured once per process (12
// independent accumulators in registers, best of 5 short runs); the backend decides from them
// (bf16_dot_issue_ratio).
__attribute__((noinline)) double dpbf16_fma_issue_ratio() {
  auto best_seconds = [](auto&& loop) {
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      loop();
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  constexpr int kIters = 2048, kChains = 12;
  volatile float sink = 0.f;
  const __m512 b = _mm512_set1_ps(1.0000001f), c = _mm512_set1_ps(1e-7f);
  const double dot = best_seconds([&] {
    __m512 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i));
    for (int it = 0; it < kIters; ++it)
      for (int i = 0; i < kChains; ++i)
        acc[i] = _mm512_dpbf16_ps(acc[i], (__m512bh)_mm512_castps_si512(b),
                                  (__m512bh)_mm512_castps_si512(c));
    for (int i = 0; i < kChains; ++i) sink = sink + _mm512_reduce_add_ps(acc[i]);
  });
  const double fma = best_seconds([&] {
    __m512 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i));
    for (int it = 0; it < kIters; ++it)
      for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], b, c);
    for (int i = 0; i < kChains; ++i) sink = sink + _mm512_reduce_add_ps(acc[i]);
  });
  return fma / dot;
}
double issue_ratio() {
  static const double ratio = dpbf16_fma_issue_ratio();
  return ratio;
}

// One A element = one bf16 pair (a dword); dpbf16 sums the two products of each pair.
struct OpBf16 {
  using A = uint32_t;
  using B = uint32_t;
  using AVec = __m512i;
  using BVec = __m512i;
  // vdpbf16ps keeps the 8x2 block it was tuned at: the fp32 block's 6x4 was measured only on a
  // CPU where vdpbf16ps does not pay (simd_avx512.hpp).
  static constexpr int MR = 8, NR = 2;
  static AVec bcast_a(const uint32_t* p) { return _mm512_set1_epi32(int(*p)); }
  static BVec load_b(const uint32_t* p) { return _mm512_loadu_si512(p); }
  static __m512 madd(__m512 acc, AVec a, BVec b) {
    return _mm512_dpbf16_ps(acc, (__m512bh)b, (__m512bh)a);
  }
};

void gemm_dispatch(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c);

struct PathBf16 {
  using Op = OpBf16;
  using PElem = uint16_t;
  static constexpr int kPack = 2;
  static constexpr int kRowAlign = 1, kKeyAlign = 16;
  static constexpr bool kDirectScores = false;
  static void gemm(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c) {
    gemm_dispatch(M, N, K, A, lda, B, ldb, C, ldc, load_c);
  }
  static void load_q(const void* src, DType, int d, uint32_t* dst) {
    std::memcpy(dst, src, size_t(d) * 2);
  }
  // Kt[d / 2][ntp] dwords: dword (p, n) = (K[n][2p], K[n][2p + 1]). Read straight from the cache.
  static void pack_k(const AttentionArgs&, const CacheRows& rows, int n0, int nt, int ntp, int d,
                     float*, uint32_t* kt) {
    const int pairs = d / 2;
    const uint32_t* r[16];
    for (int nb = 0; nb < ntp; nb += 16) {
      for (int i = 0; i < 16; ++i)
        r[i] = reinterpret_cast<const uint32_t*>(nb + i < nt ? rows.row(n0 + nb + i) : kZeroRow);
      int c = 0;
      for (; c + 16 <= pairs; c += 16) Simd::transpose(r, c, kt + int64_t(c) * ntp + nb, ntp);
      for (; c < pairs; ++c)
        for (int i = 0; i < 16; ++i) kt[int64_t(c) * ntp + nb + i] = r[i][c];
    }
  }
  // Vp[ntp / 2][dv] dwords: dword (p, j) = (V[2p][j], V[2p + 1][j]).
  static void pack_v(const AttentionArgs&, const CacheRows& rows, int n0, int nt, int ntp, int dv,
                     int, float*, uint32_t* vp) {
    alignas(64) static constexpr uint16_t kLo[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                     37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                     11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i lo = _mm512_load_si512(kLo);
    const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    for (int n = 0; n < ntp; n += 2) {
      const auto* a = reinterpret_cast<const uint16_t*>(n < nt ? rows.row(n0 + n) : kZeroRow);
      const auto* b =
          reinterpret_cast<const uint16_t*>(n + 1 < nt ? rows.row(n0 + n + 1) : kZeroRow);
      uint32_t* dst = vp + int64_t(n / 2) * dv;
      int j = 0;
      for (; j + 32 <= dv; j += 32) {
        const __m512i va = _mm512_loadu_si512(a + j), vb = _mm512_loadu_si512(b + j);
        _mm512_storeu_si512(dst + j, _mm512_permutex2var_epi16(va, lo, vb));
        _mm512_storeu_si512(dst + j + 16, _mm512_permutex2var_epi16(va, hi, vb));
      }
      for (; j < dv; ++j) dst[j] = uint32_t(a[j]) | (uint32_t(b[j]) << 16);
    }
  }
  // fp8 code magnitudes (7 bits) -> bf16 bits, per format (e4m3, e5m2): exact, since every
  // e4m3/e5m2 value (subnormals included) is a bf16 normal; NaN and infinity codes map to bf16
  // NaN and infinity. 32 codes take two word permutes and a blend: 9 ns per 128 codes against
  // 12 for session 3's re-biasing arithmetic with its subnormal and special-code fix-ups
  // (results/cpu_2026-11-30_s10_*).
  struct Fp8Table {
    alignas(64) uint16_t bits[2][128];
    Fp8Table() {
      for (int i = 0; i < 128; ++i) {
        bits[0][i] = float_to_bf16_bits(fp8_e4m3_to_float(uint8_t(i)));
        bits[1][i] = float_to_bf16_bits(fp8_e5m2_to_float(uint8_t(i)));
      }
    }
  };
  static const uint16_t* fp8_table(bool e5m2) {
    static const Fp8Table t;
    return t.bits[e5m2 ? 1 : 0];
  }
  // fp8_table's 128 entries in four registers, as fp8x32_to_bf16 takes them (the pointers set
  // once at start-up: no guard of fp8_table's static in the few-rows form's loops).
  static inline const uint16_t* const kFp8Bits[2] = {fp8_table(false), fp8_table(true)};
  static void fp8_word_tables(bool e5m2, __m512i (&t)[4]) {
    const uint16_t* tb = kFp8Bits[e5m2 ? 1 : 0];
    for (int i = 0; i < 4; ++i) t[i] = _mm512_load_si512(tb + 32 * i);
  }
  // 32 codes -> bf16 bits: entries 0-63 and 64-127 by two two-table permutes (index bits 0-5),
  // bit 6 picks one, bit 7 is the sign.
  static __m512i fp8x32_to_bf16(__m256i codes, const __m512i (&t)[4]) {
    const __m512i b = _mm512_cvtepu8_epi16(codes);
    const __m512i lo = _mm512_permutex2var_epi16(t[0], b, t[1]);
    const __m512i hi = _mm512_permutex2var_epi16(t[2], b, t[3]);
    const __m512i v =
        _mm512_mask_mov_epi16(lo, _mm512_test_epi16_mask(b, _mm512_set1_epi16(0x40)), hi);
    // v | (b << 8 & 0x8000)
    return _mm512_ternarylogic_epi32(v, _mm512_slli_epi16(b, 8), _mm512_set1_epi16(int16_t(0x8000)),
                                     0xf8);
  }
  // Staged rows nt..ntp of a tile (past the sequence) are zero: slots there may hold anything.
  static void zero_staged_tail(uint16_t* dst, int nt, int ntp, int d) {
    if (ntp > nt) std::memset(dst + int64_t(nt) * d, 0, size_t(ntp - nt) * d * 2);
  }
  // fp8 rows -> bf16 rows (exact: e4m3/e5m2 values, subnormals included, are bf16 normals),
  // zero rows from nt to ntp.
  static void stage_rows(KvCacheDType dt, const CacheRows& rows, int n0, int nt, int ntp, int d,
                         uint16_t* dst) {
    static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
    if (vbmi) return stage_rows_vbmi(dt, rows, n0, nt, ntp, d, dst);
    stage_rows_words(dt, rows, n0, nt, ntp, d, dst);
  }
  // With word tables (AVX512BW).
  static void stage_rows_words(KvCacheDType dt, const CacheRows& rows, int n0, int nt, int ntp,
                               int d, uint16_t* dst) {
    __m512i t[4];
    fp8_word_tables(dt == KvCacheDType::kFp8E5M2, t);
    zero_staged_tail(dst, nt, ntp, d);
    for (int n = 0; n < nt; ++n) {
      uint16_t* o = dst + int64_t(n) * d;
      const uint8_t* src = rows.row(n0 + n);
      int i = 0;
      for (; i + 32 <= d; i += 32)
        _mm512_storeu_si512(
            o + i,
            fp8x32_to_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)), t));
      if (i < d) {  // a 16-code tail (head sizes are multiples of 16): masked, not the hot path
        const __mmask32 lanes = (__mmask32(1) << (d - i)) - 1;
        _mm512_mask_storeu_epi16(o + i, lanes,
                                 fp8x32_to_bf16(_mm256_maskz_loadu_epi8(lanes, src + i), t));
      }
    }
  }
  // With AVX512_VBMI (every AMX CPU has it, and some without AMX): the high and low bytes of
  // fp8_table's entries as two 128-entry byte tables, 64 codes per step: two byte permutes, the
  // sign merged into the high bytes, two unpacks into words (the codes' qwords pre-ordered so
  // that the unpacks come out in order). 4.7 ns per 128 codes against 7.2 for the word tables
  // (results/cpu_2026-11-30_s10_*); the same values for every code.
  struct Fp8ByteTable {
    alignas(64) uint8_t hi[2][128], lo[2][128];
    Fp8ByteTable() {
      for (int f = 0; f < 2; ++f)
        for (int i = 0; i < 128; ++i) {
          hi[f][i] = uint8_t(fp8_table(f == 1)[i] >> 8);
          lo[f][i] = uint8_t(fp8_table(f == 1)[i]);
        }
    }
  };
  __attribute__((target("avx512vbmi"))) static void stage_rows_vbmi(KvCacheDType dt,
                                                                    const CacheRows& rows, int n0,
                                                                    int nt, int ntp, int d,
                                                                    uint16_t* dst) {
    static const Fp8ByteTable tables;
    const int f = dt == KvCacheDType::kFp8E5M2 ? 1 : 0;
    const __m512i h0 = _mm512_load_si512(tables.hi[f]), h1 = _mm512_load_si512(tables.hi[f] + 64);
    const __m512i l0 = _mm512_load_si512(tables.lo[f]), l1 = _mm512_load_si512(tables.lo[f] + 64);
    const __m512i order = _mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7);
    zero_staged_tail(dst, nt, ntp, d);
    for (int n = 0; n < nt; ++n) {
      uint16_t* o = dst + int64_t(n) * d;
      const uint8_t* src = rows.row(n0 + n);
      for (int i = 0; i < d; i += 64) {
        const int left = d - i;  // a multiple of 16
        const __mmask64 in = left >= 64 ? ~__mmask64(0) : (__mmask64(1) << left) - 1;
        const __m512i c = _mm512_permutexvar_epi64(order, _mm512_maskz_loadu_epi8(in, src + i));
        const __m512i hi = _mm512_ternarylogic_epi32(_mm512_permutex2var_epi8(h0, c, h1), c,
                                                     _mm512_set1_epi8(char(0x80)), 0xf8);
        const __m512i lo = _mm512_permutex2var_epi8(l0, c, l1);
        if (left >= 64) {
          _mm512_storeu_si512(o + i, _mm512_unpacklo_epi8(lo, hi));
          _mm512_storeu_si512(o + i + 32, _mm512_unpackhi_epi8(lo, hi));
        } else {  // a tail of 16, 32 or 48 codes
          const __mmask32 a = left >= 32 ? ~__mmask32(0) : (__mmask32(1) << left) - 1;
          const __mmask32 b = left > 32 ? (__mmask32(1) << (left - 32)) - 1 : 0;
          _mm512_mask_storeu_epi16(o + i, a, _mm512_unpacklo_epi8(lo, hi));
          _mm512_mask_storeu_epi16(o + i + 32, b, _mm512_unpackhi_epi8(lo, hi));
        }
      }
    }
  }
  static void store_p(const float* p, int n, uint16_t* dst) {
    for (int j = 0; j < n; j += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j),
                          (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(p + j)));
  }

  // Decode-sized items take the few-rows form (few_rows.hpp): on this path's packed layout, the
  // K transposes and the V interleave cost as much as the products at 4 rows, and where vdpbf16ps
  // issues at a quarter of the FMA rate (Intel model 207) FMAs do the products in half its time.
  // Each 32-element step of a bf16 row becomes its even elements (a shift) and its odd ones (a
  // mask), so O's dims come out as 16 even, then 16 odd per 32 (unpermute_o). Up to 32 rows where
  // vdpbf16ps does not pay (interleaved in one process on that CPU: the 4-token GQA 8 decode row,
  // 32 rows an item over a cache above L3, 1.20-1.29x the fp32 path's packed form; prefill items
  // of 32 rows, in cache, 0.93-1.02x; results/cpu_2026-12-01_s23_few32_after_6x4_interleaved.txt;
  // 48 and 64 rows 0.89-1.03x against the older 8x2 block), else up to 16 (the 16/1 split-KV row
  // 4.5-5.5 -> 6.4-6.7 GB/s against 8, results/cpu_2026-12-01_s21_few_rows_ab.jsonl).
  static constexpr int kFewRows = 32;
  static int few_max(const AttentionArgs&, bool bf16_dots) { return bf16_dots ? 16 : kFewRows; }
  static constexpr bool kFewPermutesO = true;
  struct EvenOdd {
    using E = uint16_t;
    static void pair(const uint16_t* p, __m512& even, __m512& odd) {
      split(_mm512_loadu_si512(p), even, odd);
    }
    // 32 bf16 words -> their even elements (a shift) and their odd ones (a mask) as fp32.
    static void split(__m512i w, __m512& even, __m512& odd) {
      even = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
      odd = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32(int32_t(0xffff0000u))));
    }
  };
  // fp8 rows read where they lie: 32 codes to bf16 bits by the word tables (as stage_rows_words),
  // then EvenOdd's split. The form stages no copy of the tile (fp8 GQA 32/8 decode on 2 AMX
  // vCPUs, three alternating rounds: 9.0-9.1 -> 9.3-9.6 GB/s; cpu_2026-12-02_s30_fp8_in_place_ab).
  // Past the sequence, the rows are kZeroRow: code 0 is +0.
  template <bool kE5m2>
  struct Fp8EvenOdd {
    using E = uint8_t;
    static void pair(const uint8_t* p, __m512& even, __m512& odd) {
      __m512i t[4];
      fp8_word_tables(kE5m2, t);
      const __m512i w = fp8x32_to_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), t);
      EvenOdd::split(w, even, odd);
    }
  };
  // fn(loader) with the few-rows form's loader for the cache's rows.
  template <class Fn>
  static void with_few_loader(KvCacheDType dt, Fn&& fn) {
    if (dt == KvCacheDType::kBFloat16)
      fn(EvenOdd{});
    else if (dt == KvCacheDType::kFp8E5M2)
      fn(Fp8EvenOdd<true>{});
    else
      fn(Fp8EvenOdd<false>{});
  }
  // Q (bf16 pairs) into qf (room for rows_n x d floats) as EvenOdd converts K.
  static const float* few_q(const uint32_t* qs, int rows_n, int d, float* qf) {
    for (int r = 0; r < rows_n; ++r)
      for (int c = 0; c < d; c += 32) {
        __m512 even, odd;
        EvenOdd::pair(reinterpret_cast<const uint16_t*>(qs) + int64_t(r) * d + c, even, odd);
        _mm512_storeu_ps(qf + int64_t(r) * d + c, even);
        _mm512_storeu_ps(qf + int64_t(r) * d + c + 16, odd);
      }
    return qf;
  }
  template <class Tick>
  static void few_scores(const AttentionArgs& a, const CacheRows& rows, int n0, int nt, int ntp,
                         int d, const float* qf, int rows_n, float* s, Tick&& tick) {
    with_few_loader(a.kv.dtype, [&](auto ld) {
      scores_in_place<decltype(ld)>(rows, n0, nt, ntp, d, qf, rows_n, s, tick);
    });
  }
  template <class Tick>
  static void few_pv(const AttentionArgs& a, const CacheRows& rows, int n0, int nt, int dv,
                     const float* p, int ntp, int rows_n, float* o, Tick&& tick) {
    with_few_loader(a.kv.dtype, [&](auto ld) {
      pv_in_place<decltype(ld)>(rows, n0, nt, dv, p, ntp, rows_n, o, tick);
    });
  }
  // Interleaves each 32-dim chunk of o (16 even dims, 16 odd dims) back into dim order.
  static void unpermute_o(float* o, int dv) {
    alignas(64) static constexpr int32_t kLo[16] = {0, 16, 1, 17, 2, 18, 3, 19,
                                                    4, 20, 5, 21, 6, 22, 7, 23};
    const __m512i lo = _mm512_load_si512(kLo);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    for (int c = 0; c < dv; c += 32) {
      const __m512 e = _mm512_loadu_ps(o + c), od = _mm512_loadu_ps(o + c + 16);
      _mm512_storeu_ps(o + c, _mm512_permutex2var_ps(e, lo, od));
      _mm512_storeu_ps(o + c + 16, _mm512_permutex2var_ps(e, hi, od));
    }
  }
};

// AMX: C[M][N] (+)= A[M][K pairs] x B[K pairs][N] in 16 x 16 fp32 tiles (tmm0-3), A tiles
// 16 rows x 16 pairs (tmm4-5), B tiles 16 pairs x 16 columns (tmm6-7). The kernel's layouts are
// already AMX's: Q/P rows are bf16 row-major, Kt/Vp are the pair-interleaved ("VNNI") B form.
// M, N, K multiples of 16.
template <int RM, int RN>
inline void amx_block(int K, const uint32_t* A, int64_t lda, const uint32_t* B, int64_t ldb,
                      float* C, int64_t ldc, bool load_c) {
  const int64_t sa = lda * 4, sb = ldb * 4, sc = ldc * 4;
  if (load_c) {
    _tile_loadd(0, C, sc);
    if constexpr (RN > 1) _tile_loadd(1, C + 16, sc);
    if constexpr (RM > 1) _tile_loadd(2, C + 16 * ldc, sc);
    if constexpr (RM > 1 && RN > 1) _tile_loadd(3, C + 16 * ldc + 16, sc);
  } else {
    _tile_zero(0);
    if constexpr (RN > 1) _tile_zero(1);
    if constexpr (RM > 1) _tile_zero(2);
    if constexpr (RM > 1 && RN > 1) _tile_zero(3);
  }
  for (int k = 0; k < K; k += 16) {
    _tile_loadd(4, A + k, sa);
    _tile_loadd(6, B + k * ldb, sb);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (RN > 1) {
      _tile_loadd(7, B + k * ldb + 16, sb);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (RM > 1) {
      _tile_loadd(5, A + 16 * lda + k, sa);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (RN > 1) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, C, sc);
  if constexpr (RN > 1) _tile_stored(1, C + 16, sc);
  if constexpr (RM > 1) _tile_stored(2, C + 16 * ldc, sc);
  if constexpr (RM > 1 && RN > 1) _tile_stored(3, C + 16 * ldc + 16, sc);
}

struct TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tile configuration is per thread; loaded at the start of every AMX work item (cheap next to
// an item), so other AMX users on the same thread cannot leave a different shape behind.
inline void amx_configure() {
  alignas(64) TileConfig c;
  for (int i = 0; i < 8; ++i) c.colsb[i] = 64, c.rows[i] = 16;
  // GCC 12 may drop the stores above: ldtilecfg's memory operand is not visible to it.
  asm volatile("" ::"m"(c) : "memory");
  _tile_loadconfig(&c);
}

inline void gemm_amx(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                     int64_t ldb, float* C, int64_t ldc, bool load_c) {
  for (int m0 = 0; m0 < M; m0 += 32) {
    const bool two_m = M - m0 >= 32;
    for (int n0 = 0; n0 < N; n0 += 32) {
      const bool two_n = N - n0 >= 32;
      const uint32_t* a = A + m0 * lda;
      const uint32_t* b = B + n0;
      float* c = C + m0 * ldc + n0;
      if (two_m && two_n)
        amx_block<2, 2>(K, a, lda, b, ldb, c, ldc, load_c);
      else if (two_m)
        amx_block<2, 1>(K, a, lda, b, ldb, c, ldc, load_c);
      else if (two_n)
        amx_block<1, 2>(K, a, lda, b, ldb, c, ldc, load_c);
      else
        amx_block<1, 1>(K, a, lda, b, ldb, c, ldc, load_c);
    }
  }
}

// The AMX path: the bf16 path's packing and softmax, AMX products; 16-row, 32-key granularity.
// Per block of 16 query rows (items of up to 128 rows), scores come transposed, S^T = K Q^T, with
// the K rows loaded as A tiles straight from the cache (16 keys of a block at stride_token): no K
// packing; and for up to 32 rows P V takes the V rows as B tiles straight from the cache too
// (direct_pv): no V packing.
struct PathAmx : PathBf16 {
  static constexpr int kRowAlign = 16, kKeyAlign = 32;
  static constexpr int kFewRows = 0;  // run_item_amx sends decode-sized items to PathBf16
  static int few_max(const AttentionArgs&, bool) { return 0; }
  static constexpr bool kDirectScores = true;
  static void gemm(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c) {
    gemm_amx(M, N, K, A, lda, B, ldb, C, ldc, load_c);
  }
  // qt[p][r] = q pair p of row r (the B operand of S^T).
  static void pack_qt(const uint32_t* qs, int rows, int pairs, uint32_t* qt) {
    for (int r = 0; r < rows; ++r)
      for (int p = 0; p < pairs; ++p) qt[int64_t(p) * rows + r] = qs[int64_t(r) * pairs + p];
  }
  // s[16 rows][ntp] for keys n0.. (n0 % 16 == 0, block_size % 16 == 0: each 16-key group is
  // contiguous in one block; slots past nt inside that block are read but masked later). Two
  // groups at a time, and every tile register alternates between two with the pair step, so
  // the next step's loads do not wait for this step's products. c16 holds 2 tiles. tick() before
  // each pair of groups (the caller's prefetch slices).
  template <class Tick>
  static void direct_scores(const CacheRows& rows, int n0, int nt, int ntp, int d,
                            const uint32_t* qt, int rows_c, float* s, float* c16, Tick&& tick) {
    const int pairs = d / 2;
    const int64_t sq = int64_t(rows_c) * 4, sk = rows.s_token;
    for (int kg = 0; kg < ntp; kg += 32) {
      tick();
      const bool two = kg + 16 < nt;  // the second group has a key
      if (kg >= nt) {  // no key of these groups exists: finite filler, masked by the softmax
        for (int r = 0; r < rows_c; ++r) std::memset(s + int64_t(r) * ntp + kg, 0, 128);
        continue;
      }
      const uint8_t* k0 = rows.row(n0 + kg);
      const uint8_t* k1 = two ? rows.row(n0 + kg + 16) : k0;
      _tile_zero(0);
      _tile_zero(1);
      for (int p = 0; p < pairs; p += 32) {  // steps p (registers 2, 4, 6) and p + 16 (3, 5, 7)
        _tile_loadd(2, qt + int64_t(p) * rows_c, sq);
        _tile_loadd(4, k0 + int64_t(p) * 4, sk);
        _tile_dpbf16ps(0, 4, 2);
        if (two) {
          _tile_loadd(6, k1 + int64_t(p) * 4, sk);
          _tile_dpbf16ps(1, 6, 2);
        }
        if (p + 16 < pairs) {
          _tile_loadd(3, qt + int64_t(p + 16) * rows_c, sq);
          _tile_loadd(5, k0 + int64_t(p + 16) * 4, sk);
          _tile_dpbf16ps(0, 5, 3);
          if (two) {
            _tile_loadd(7, k1 + int64_t(p + 16) * 4, sk);
            _tile_dpbf16ps(1, 7, 3);
          }
        }
      }
      _tile_stored(0, c16, 64);
      if (two) _tile_stored(1, c16 + 256, 64);
      for (int h = 0; h < 2; ++h) {
        if (kg + 16 * h >= ntp) break;
        if (h == 1 && !two) {
          for (int r = 0; r < rows_c; ++r) std::memset(s + int64_t(r) * ntp + kg + 16, 0, 64);
          break;
        }
        const uint32_t* src[16];
        for (int i = 0; i < 16; ++i)
          src[i] = reinterpret_cast<const uint32_t*>(c16 + h * 256 + i * 16);
        Simd::transpose(src, 0, reinterpret_cast<uint32_t*>(s + kg + 16 * h), ntp);
      }
    }
  }
  // Whether x[0..n) (n a multiple of 16) holds a NaN: 16 at a time (a scalar scan took ~6% of a
  // 32-row item's profile samples in L2).
  static bool any_nan(const float* x, int n) {
    __mmask16 m = 0;
    for (int i = 0; i < n; i += 16) {
      const __m512 v = _mm512_loadu_ps(x + i);
      m |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    return m != 0;
  }
  // O[16][dv] += P[16][nt] V[nt][dv] with V rows as they lie in the cache (no packing). A B
  // tile is 16 keys x 32 dims of V as stored: dword j = dims (2j, 2j + 1) of one key. It is
  // multiplied once by P in the low halves of the A dwords (sums the even dims) and once by P
  // in the high halves (odd dims): twice the tile products of packed V, no V pass through
  // registers. O's dims are therefore kept permuted per 32: 16 even, then 16 odd
  // (unpermute_o restores them). Groups of 16 keys that are not one contiguous run in the
  // cache (block edge, end of the range) are copied to `vtail` first, zero-padded: slots past
  // the sequence may hold anything (NaN times a zero probability is NaN). `ap` holds the A
  // tiles ([group][even/odd][16 rows][16 dwords]); its rows from rows_n on are padding, left as
  // they are: a row of A reaches only the same row of O, and O's padding rows are never read.
  // tick() before each group's A tiles and each 64 dims of O.
  template <class Tick>
  static void direct_pv(const CacheRows& rows, int n0, int nt, int dv, const float* p, int ntp,
                        int rows_n, uint32_t* ap, uint16_t* vtail, float* o, Tick&& tick) {
    const int groups = (nt + 15) / 16;
    const uint8_t* vg[kKeyTile / 16];
    int64_t vstride[kKeyTile / 16];
    for (int g = 0; g < groups; ++g) {
      tick();
      const int k0 = n0 + g * 16, kn = std::min(16, nt - g * 16);
      for (int r = 0; r < rows_n; ++r) {
        const __m512i b = _mm512_cvtepu16_epi32(
            (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(p + int64_t(r) * ntp + g * 16)));
        _mm512_storeu_si512(ap + ((g * 2) * 16 + r) * 16, b);
        _mm512_storeu_si512(ap + ((g * 2 + 1) * 16 + r) * 16, _mm512_slli_epi32(b, 16));
      }
      if (kn == 16 && rows.slot_of(k0) + 16 <= rows.block_size) {
        vg[g] = rows.row(k0);
        vstride[g] = rows.s_token;
      } else {
        uint16_t* t = vtail + int64_t(g) * 16 * dv;
        for (int i = 0; i < 16; ++i) {
          if (i < kn)
            std::memcpy(t + int64_t(i) * dv, rows.row(k0 + i), size_t(dv) * 2);
          else
            std::memset(t + int64_t(i) * dv, 0, size_t(dv) * 2);
        }
        vg[g] = reinterpret_cast<const uint8_t*>(t);
        vstride[g] = int64_t(dv) * 2;
      }
    }
    const int64_t so = int64_t(dv) * 4;
    for (int c = 0; c < dv; c += 64) {
      tick();
      const bool two = c + 64 <= dv;  // two 32-dim chunks (tiles 0-3), else one (0-1)
      float* oc = o + c;
      _tile_loadd(0, oc, so);
      _tile_loadd(1, oc + 16, so);
      if (two) {
        _tile_loadd(2, oc + 32, so);
        _tile_loadd(3, oc + 48, so);
      }
      for (int g = 0; g < groups; ++g) {
        _tile_loadd(4, ap + g * 2 * 256, 64);
        _tile_loadd(5, ap + (g * 2 + 1) * 256, 64);
        _tile_loadd(6, vg[g] + int64_t(c) * 2, vstride[g]);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 5, 6);
        if (two) {
          _tile_loadd(7, vg[g] + int64_t(c) * 2 + 64, vstride[g]);
          _tile_dpbf16ps(2, 4, 7);
          _tile_dpbf16ps(3, 5, 7);
        }
      }
      _tile_stored(0, oc, so);
      _tile_stored(1, oc + 16, so);
      if (two) {
        _tile_stored(2, oc + 32, so);
        _tile_stored(3, oc + 48, so);
      }
    }
  }
};

}  // namespace attnkit::cpu_flash::isa_avx512_bf16

#define ATTNKIT_ISA_NS isa_avx512_bf16
#define ATTNKIT_CPU_FLASH_FEW_ROWS 1
#define ATTNKIT_CPU_FLASH_BF16_PATH 1
#define ATTNKIT_CPU_FLASH_AMX_PATH 1
#include "backends/cpu_flash/kernel_impl.hpp"

namespace attnkit::cpu_flash::isa_avx512_bf16 {
void gemm_dispatch(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c) {
  gemm<OpBf16>(M, N, K, A, lda, StridedRows<uint32_t>{B, ldb}, C, ldc, load_c);
}
}  // namespace attnkit::cpu_flash::isa_avx512_bf16

namespace attnkit::cpu_flash {
double dpbf16_issue_ratio() { return isa_avx512_bf16::issue_ratio(); }
void stage_fp8_rows_bf16(KvCacheDType dt, bool byte_tables, const uint8_t* codes, int rows, int d,
                         uint16_t* out) {
  const CacheRows r = dense_rows(codes, d);
  using P = isa_avx512_bf16::PathBf16;
  if (byte_tables)
    P::stage_rows_vbmi(dt, r, 0, rows, rows, d, out);
  else
    P::stage_rows_words(dt, r, 0, rows, rows, d, out);
}
const KernelFns& kernels_avx512_bf16() {
  static const KernelFns f{Isa::kAvx512Bf16, true, &isa_avx512_bf16::run_item};
  return f;
}
const KernelFns& kernels_amx_bf16() {
  static const KernelFns f{Isa::kAmxBf16, true, &isa_avx512_bf16::run_item_amx};
  return f;
}
}  // namespace attnkit::cpu_flash

#else  // not x86-64: isa_supported() never selects this variant
namespace attnkit::cpu_flash {
double dpbf16_issue_ratio() { return 0.0; }
void stage_fp8_rows_bf16(KvCacheDType, bool, const uint8_t*, int, int, uint16_t*) {}
const KernelFns& kernels_avx512_bf16() { return kernels_scalar(); }
const KernelFns& kernels_amx_bf16() { return kernels_scalar(); }
}  // namespace attnkit::cpu_flash
#endif
