// The bf16 path of CPU_FLASH (bf16 queries over a bf16 or fp8 cache), shared by the AVX512_BF16
// variant's two builds (kernel_avx512_bf16.cpp, kernel_avx512_bf16_vbmi.cpp) and the AMX variant
// (kernel_amx_bf16.cpp); the last two have AVX512_VBMI and define ATTNKIT_CPU_FLASH_VBMI (their
// target pragma does not define GCC's __AVX512VBMI__). Included inside an ISA namespace after its
// `Simd` and few_rows.hpp; the includer provides <immintrin.h>, <algorithm>, <cstring> and
// <type_traits>.
#pragma once

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

// PathBf16's micro-GEMM on vdpbf16ps; defined at the end of kernel_impl.hpp, after gemm.
void gemm_dispatch(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c);

// fp8 code magnitudes (7 bits) -> bf16 bits, per format (e4m3, e5m2): exact, since every
// e4m3/e5m2 value (subnormals included) is a bf16 normal; NaN and infinity codes map to bf16
// NaN and infinity. 32 codes take two word permutes and a blend: 9 ns per 128 codes against
// 12 for session 3's re-biasing arithmetic with its subnormal and special-code fix-ups
// (results/cpu_2026-11-30_s10_*). With AVX512_VBMI, the entries' high and low bytes as two
// byte tables (stage_rows_vbmi, Fp8Quad). Built at compile time from the scalar conversions:
// this file's variants are compiled for AVX-512, and a table built at start-up would run their
// code before detect_isa() chose one (it killed every process on CPUs without AVX-512).
struct Fp8Tables {
  alignas(64) uint16_t bits[2][128];
  alignas(64) uint8_t hi[2][128], lo[2][128];
};
constexpr Fp8Tables fp8_tables() {
  Fp8Tables t{};
  for (int i = 0; i < 128; ++i) {
    t.bits[0][i] = float_to_bf16_bits(fp8_e4m3_to_float(uint8_t(i)));
    t.bits[1][i] = float_to_bf16_bits(fp8_e5m2_to_float(uint8_t(i)));
    for (int f = 0; f < 2; ++f) {
      t.hi[f][i] = uint8_t(t.bits[f][i] >> 8);
      t.lo[f][i] = uint8_t(t.bits[f][i]);
    }
  }
  return t;
}
inline constexpr Fp8Tables kFp8 = fp8_tables();

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
  static void fp8_word_tables(bool e5m2, __m512i (&t)[4]) {
    const uint16_t* tb = kFp8.bits[e5m2 ? 1 : 0];
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
  // With AVX512_VBMI (every AMX CPU has it, and some without AMX): fp8_tables' byte tables, 64
  // codes per step: two byte permutes, the sign merged into the high bytes, two unpacks into
  // words (the codes' qwords pre-ordered so that the unpacks come out in order). 4.7 ns per 128
  // codes against 7.2 for the word tables (results/cpu_2026-11-30_s10_*); the same values for
  // every code.
  __attribute__((target("avx512vbmi"))) static void stage_rows_vbmi(KvCacheDType dt,
                                                                    const CacheRows& rows, int n0,
                                                                    int nt, int ntp, int d,
                                                                    uint16_t* dst) {
    const Fp8Tables& t = kFp8;
    const int f = dt == KvCacheDType::kFp8E5M2 ? 1 : 0;
    const __m512i h0 = _mm512_load_si512(t.hi[f]), h1 = _mm512_load_si512(t.hi[f] + 64);
    const __m512i l0 = _mm512_load_si512(t.lo[f]), l1 = _mm512_load_si512(t.lo[f] + 64);
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
  // 4.5-5.5 -> 6.4-6.7 GB/s against 8, results/cpu_2026-12-01_s21_few_rows_ab.jsonl) unless the
  // dot form (below) takes the cache's rows: then up to kFewDotRows.
  static constexpr int kFewRows = 32;
  static int few_max(const AttentionArgs& a, bool bf16_dots) {
    return few_dots(a, bf16_dots) ? kFewDotRows : bf16_dots ? 16 : kFewRows;
  }
  static constexpr bool kFewPermutesO = true;
  struct EvenOdd {
    using E = uint16_t;
    static constexpr int kVecs = 2;
    static void load(const uint16_t* p, __m512 (&x)[2]) {
      split(_mm512_loadu_si512(p), x[0], x[1]);
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
    static constexpr int kVecs = 2;
    static void load(const uint8_t* p, __m512 (&x)[2]) {
      __m512i t[4];
      fp8_word_tables(kE5m2, t);
      const __m512i w = fp8x32_to_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), t);
      EvenOdd::split(w, x[0], x[1]);
    }
  };
#ifdef ATTNKIT_CPU_FLASH_VBMI
  static constexpr bool kFp8Quad = true;
  // 64 fp8 codes -> their bf16 bits as two vectors of words, bytes 0-7 (w0) and 8-15 (w1) of each
  // 128-bit lane of codes (AVX512_VBMI): the high and low bytes by two byte-table permutes
  // (kFp8), the sign merged into the high bytes, the halves interleaved by two unpacks.
  template <bool kE5m2>
  static void fp8x64_words(const uint8_t* p, __m512i& w0, __m512i& w1) {
    constexpr int f = kE5m2 ? 1 : 0;
    const __m512i c = _mm512_loadu_si512(p);
    const __m512i hi =
        _mm512_ternarylogic_epi32(_mm512_permutex2var_epi8(_mm512_load_si512(kFp8.hi[f]), c,
                                                           _mm512_load_si512(kFp8.hi[f] + 64)),
                                  c, _mm512_set1_epi8(char(0x80)), 0xf8);
    const __m512i lo = _mm512_permutex2var_epi8(_mm512_load_si512(kFp8.lo[f]), c,
                                                _mm512_load_si512(kFp8.lo[f] + 64));
    w0 = _mm512_unpacklo_epi8(lo, hi);
    w1 = _mm512_unpackhi_epi8(lo, hi);
  }
  // fp8 rows 64 codes a step: fp8x64_words, each vector of words split as EvenOdd splits: 9
  // instructions per 64 codes where Fp8EvenOdd takes 18 (its word permutes several micro-ops
  // each), all on the two ports the FMAs use. The four vectors hold a 64-dim step's dims in
  // quad_dim order.
  template <bool kE5m2>
  struct Fp8Quad {
    using E = uint8_t;
    static constexpr int kVecs = 4;
    static void load(const uint8_t* p, __m512 (&x)[4]) {
      __m512i w0, w1;
      fp8x64_words<kE5m2>(p, w0, w1);
      EvenOdd::split(w0, x[0], x[1]);
      EvenOdd::split(w1, x[2], x[3]);
    }
  };
#else
  static constexpr bool kFp8Quad = false;
#endif
  // Dim of word w of a step of vecs vectors of 32 words, as the loaders give them: in order for one
  // vector (bf16 rows), fp8x64_words' order for two (bytes 0-7, then 8-15, of each 128-bit lane of
  // 16 codes).
  static int step_word_dim(int vecs, int w) {
    if (vecs == 1) return w;
    const int i = w / 32, x = w % 32;
    return 16 * (x / 8) + 8 * i + x % 8;
  }
  // Element p of Fp8Quad's vectors (16 i + lane j) is dim quad_dim(p) of its 64-dim step: word
  // 2 j (i even) or 2 j + 1 of fp8x64_words' vector i / 2, as EvenOdd splits it.
  static int quad_dim(int p) {
    const int i = p / 16, j = p % 16;
    return step_word_dim(2, 32 * (i / 2) + 2 * j + i % 2);
  }
  // Whether rows of n elements of the cache take Fp8Quad.
  static bool few_quad(KvCacheDType dt, int n) {
    return kFp8Quad && (dt == KvCacheDType::kFp8E4M3 || dt == KvCacheDType::kFp8E5M2) &&
           n % 64 == 0;
  }
  // fn(loader) with the few-rows form's loader for the cache's rows of n elements.
  template <class Fn>
  static void with_few_loader(KvCacheDType dt, int n, Fn&& fn) {
#ifdef ATTNKIT_CPU_FLASH_VBMI
    if (few_quad(dt, n)) {
      if (dt == KvCacheDType::kFp8E5M2)
        fn(Fp8Quad<true>{});
      else
        fn(Fp8Quad<false>{});
      return;
    }
#endif
    (void)n;
    if (dt == KvCacheDType::kBFloat16)
      fn(EvenOdd{});
    else if (dt == KvCacheDType::kFp8E5M2)
      fn(Fp8EvenOdd<true>{});
    else
      fn(Fp8EvenOdd<false>{});
  }
  // The few-rows form on vdpbf16ps (the dot form), where that instruction issues at the FMA rate
  // (bf16_dots: Zen 4+): Q.K^T multiplies Q's bf16 words with K's as they lie (or as fp8 codes
  // convert), P.V P's bf16 pairs (p_n, p_n+1) with V rows n and n+1 interleaved word by word,
  // both half the FMA form's instructions per row and key, without its even/odd split.
  // Q's words take the loader's order (step_word_dim); O's dims come out in dot_o_dim's.
  template <class Load>
  struct DotMac {
    using QE = uint16_t;
    using X = __m512i;
    static constexpr int kDims = Load::kVecs * 32;
    static X q(const uint16_t* p, int i) { return _mm512_loadu_si512(p + 32 * i); }
    static __m512 mac(__m512 acc, X x, X q) {
      return _mm512_dpbf16_ps(acc, (__m512bh)x, (__m512bh)q);
    }
  };
  struct Words {  // bf16 rows: 32 dims a vector, in order
    using E = uint16_t;
    using Mac = DotMac<Words>;
    static constexpr int kVecs = 1;
    static void load(const uint16_t* p, __m512i (&x)[1]) { x[0] = _mm512_loadu_si512(p); }
  };
#ifdef ATTNKIT_CPU_FLASH_VBMI
  template <bool kE5m2>
  struct Fp8DotQuad {  // fp8 rows: fp8x64_words, 64 codes a step
    using E = uint8_t;
    using Mac = DotMac<Fp8DotQuad>;
    static constexpr int kVecs = 2;
    static void load(const uint8_t* p, __m512i (&x)[2]) { fp8x64_words<kE5m2>(p, x[0], x[1]); }
  };
#endif
  // Vectors per step of the dot loader for rows of n elements of the cache (0: none; fp8 rows
  // without AVX512_VBMI, on Cooper Lake, keep the FMA form).
  static int dot_vecs(KvCacheDType dt, int n) {
    if (dt == KvCacheDType::kBFloat16) return n % 32 == 0 ? 1 : 0;
    if (few_quad(dt, n)) return 2;
    return 0;
  }
  // Dim of O's element p in a step: accumulator u = p / 16 holds vector u / 2's pairs of words
  // from the low (u even) or high halves of each 128-bit lane (the word unpacks of two V rows).
  static int dot_o_dim(int vecs, int p) {
    const int u = p / 16, q = p % 16;
    return step_word_dim(vecs, 32 * (u / 2) + 8 * (q / 4) + 4 * (u % 2) + q % 4);
  }
  // P.V's row block: 16 accumulators.
  static constexpr int dot_pv_rows(int vecs) { return 8 / vecs; }
  // The dot form takes items of up to 32 rows: on a Zen 5 VM, items of 8-32 rows ran as fast on it
  // as on the packed vdpbf16ps GEMM from L2 (8 rows +8%), and 1.4-2.5x as fast over DRAM (its
  // sliced prefetches; results/cpu_2026-12-02_s35_dot_form_rows_check.jsonl.gz).
  static constexpr int kFewDotRows = 32;
  static bool few_dots(const AttentionArgs& a, bool bf16_dots) {
    const int vk = dot_vecs(a.kv.dtype, a.layer.head_size);
    return bf16_dots && vk > 0 && vk == dot_vecs(a.kv.dtype, a.layer.head_size_v);
  }
  template <class Fn>
  static void with_dot_loader(KvCacheDType dt, Fn&& fn) {
#ifdef ATTNKIT_CPU_FLASH_VBMI
    if (dt == KvCacheDType::kFp8E5M2) return fn(Fp8DotQuad<true>{});
    if (dt == KvCacheDType::kFp8E4M3) return fn(Fp8DotQuad<false>{});
#endif
    (void)dt;
    fn(Words{});
  }
  // O[R][dv] += P V over the key pairs of v[0..nt) (v[nt] too where nt is odd: a zero row), P as
  // bf16 pairs (dwords, row stride ldp), 32 x kVecs dims a step.
  template <int R, class Load, class Tick>
  static void pv_pairs(const typename Load::E* const* v, int nt, int dv, const uint32_t* pw,
                       int64_t ldp, float* o, Tick& tick) {
    constexpr int V = Load::kVecs, U = 2 * V, kDims = 32 * V;
    for (int c = 0; c < dv; c += kDims) {
      __m512 acc[R][U];
      for (int r = 0; r < R; ++r)
        for (int u = 0; u < U; ++u) acc[r][u] = _mm512_loadu_ps(o + r * dv + c + 16 * u);
      for (int n0 = 0; n0 < nt; n0 += pv_tick_keys(R)) {
        tick();
        for (int n = n0; n < std::min(nt, n0 + pv_tick_keys(R)); n += 2) {
          __m512i va[V], vb[V], x[U];
          Load::load(v[n] + c, va);
          Load::load(v[n + 1] + c, vb);
          for (int i = 0; i < V; ++i) {
            x[2 * i] = _mm512_unpacklo_epi16(va[i], vb[i]);
            x[2 * i + 1] = _mm512_unpackhi_epi16(va[i], vb[i]);
          }
          for (int r = 0; r < R; ++r) {
            const __m512i pp = _mm512_set1_epi32(int(pw[r * ldp + n / 2]));
            for (int u = 0; u < U; ++u)
              acc[r][u] = _mm512_dpbf16_ps(acc[r][u], (__m512bh)x[u], (__m512bh)pp);
          }
        }
      }
      for (int r = 0; r < R; ++r)
        for (int u = 0; u < U; ++u) _mm512_storeu_ps(o + r * dv + c + 16 * u, acc[r][u]);
    }
  }
  // O[rows_n][dv] += P V for the tile's V rows n0 .. n0 + nt, in blocks of dot_pv_rows rows; P's
  // pairs at row stride ldp dwords (the rows as few_pv leaves them).
  template <class Load, class Tick>
  static void pv_pairs_in_place(const CacheRows& rows, int n0, int nt, int dv, const uint32_t* pw,
                                int64_t ldp, int rows_n, float* o, Tick& tick) {
    constexpr int RB = dot_pv_rows(Load::kVecs);
    using E = typename Load::E;
    const E* v[kKeyTile];
    rows.rows_from(n0, nt, v);
    if (nt % 2) v[nt] = reinterpret_cast<const E*>(kZeroRow);
    const int nt2 = nt + nt % 2;
    for (int r0 = 0; r0 < rows_n; r0 += RB)
      with_rows<RB>(std::min(RB, rows_n - r0), [&](auto rb) {
        pv_pairs<decltype(rb)::value, Load>(v, nt2, dv, pw + r0 * ldp, ldp, o + int64_t(r0) * dv,
                                            tick);
      });
  }
  // The few-rows form's tick count per tile (few_ticks), for its FMA or its dot loaders.
  static int64_t few_tick_count(const AttentionArgs& a, int nt, int dv, int rows_n, bool dots) {
    if (dots) {
      const int vecs = dot_vecs(a.kv.dtype, dv);
      return few_ticks(nt, dv, rows_n, 32 * vecs, dot_pv_rows(vecs));
    }
    const int vecs = few_quad(a.kv.dtype, dv) ? 4 : 2;
    return few_fma_ticks(nt, dv, rows_n, vecs);
  }
  // Q for the form, once per item: bf16 words in the dot loader's order (qs itself where that is
  // dim order), or fp32 as the FMA loader converts K (into qf: room for rows_n x d floats).
  static const void* few_q(const AttentionArgs& a, const uint32_t* qs, int rows_n, int d, float* qf,
                           bool dots) {
    const auto* q = reinterpret_cast<const uint16_t*>(qs);
    if (dots) {
      if (dot_vecs(a.kv.dtype, d) == 1) return q;
      auto* qw = reinterpret_cast<uint16_t*>(qf);
      for (int64_t e = 0; e < int64_t(rows_n) * d; e += 64)
        for (int w = 0; w < 64; ++w) qw[e + w] = q[e + step_word_dim(2, w)];
      return qw;
    }
    if (few_quad(a.kv.dtype, d)) {
      for (int64_t e = 0; e < int64_t(rows_n) * d; e += 64)
        for (int p = 0; p < 64; ++p) qf[e + p] = bf16_bits_to_float(q[e + quad_dim(p)]);
      return qf;
    }
    for (int64_t e = 0; e < int64_t(rows_n) * d; e += 32) {
      __m512 x[2];
      EvenOdd::load(q + e, x);
      _mm512_storeu_ps(qf + e, x[0]);
      _mm512_storeu_ps(qf + e + 16, x[1]);
    }
    return qf;
  }
  template <class Tick>
  static void few_scores(const AttentionArgs& a, const CacheRows& rows, int n0, int nt, int ntp,
                         int d, const void* q, int rows_n, float* s, Tick&& tick, bool dots) {
    auto run = [&](auto ld) {
      using M = MacOf<decltype(ld)>;
      scores_in_place<decltype(ld)>(rows, n0, nt, ntp, d, static_cast<const typename M::QE*>(q),
                                    rows_n, s, tick);
    };
    if (dots)
      with_dot_loader(a.kv.dtype, run);
    else
      with_few_loader(a.kv.dtype, d, run);
  }
  // P.V from the softmax's fp32 P (s, row stride ntp). The dot form first rounds each row to bf16
  // pairs in place (a row's 16-bit pairs fill the first half of its floats).
  template <class Tick>
  static void few_pv(const AttentionArgs& a, const CacheRows& rows, int n0, int nt, int dv,
                     float* p, int ntp, int rows_n, float* o, Tick&& tick, bool dots) {
    if (!dots) {
      with_few_loader(a.kv.dtype, dv, [&](auto ld) {
        pv_in_place<decltype(ld)>(rows, n0, nt, dv, p, ntp, rows_n, o, tick);
      });
      return;
    }
    for (int r = 0; r < rows_n; ++r) {
      float* row = p + int64_t(r) * ntp;
      // Reads keys [j, j + 32), then writes their pairs over [j / 2, j / 2 + 16).
      for (int j = 0; j < ntp; j += 32) {
        const __m512 hi = j + 16 < ntp ? _mm512_loadu_ps(row + j + 16) : _mm512_setzero_ps();
        _mm512_storeu_si512(row + j / 2,
                            (__m512i)_mm512_cvtne2ps_pbh(hi, _mm512_loadu_ps(row + j)));
      }
    }
    with_dot_loader(a.kv.dtype, [&](auto ld) {
      pv_pairs_in_place<decltype(ld)>(rows, n0, nt, dv, reinterpret_cast<const uint32_t*>(p), ntp,
                                      rows_n, o, tick);
    });
  }
  // One row of the few-rows form's O back into dim order.
  static void few_unpermute_o(const AttentionArgs& a, float* o, int dv, bool dots) {
    if (dots) {  // bf16 steps repeat the one-vector order every 32 dims
      const int vecs = dot_vecs(a.kv.dtype, dv);
      return unpermute_steps(o, dv, 32 * vecs, [vecs](int p) { return dot_o_dim(vecs, p); });
    }
    if (!few_quad(a.kv.dtype, dv)) return unpermute_o(o, dv);
    unpermute_steps(o, dv, 64, quad_dim);
  }
  // o's steps of `step` (<= 64) elements, element p of each at dim dim_of(p) of its step.
  template <class DimOf>
  static void unpermute_steps(float* o, int dv, int step, DimOf dim_of) {
    float t[64];
    for (int c = 0; c < dv; c += step) {
      for (int p = 0; p < step; ++p) t[dim_of(p)] = o[c + p];
      std::memcpy(o + c, t, sizeof(float) * size_t(step));
    }
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
