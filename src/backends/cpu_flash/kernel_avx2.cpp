// AVX2 + FMA + F16C variant (W = 8). Its code is built for those extensions only (the target
// pragma below) and called only after detect_isa() found them.
#include "backends/cpu_flash/kernel.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

// The variant's own code is built for its ISA from here to pop_options (kernel.hpp says why
// the shared headers above must not be).
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace attnkit::cpu_flash::isa_avx2 {

struct Simd {
  static constexpr int W = 8, kMR = 6, kNR = 2;
  // The few-rows form's row blocks (few_rows.hpp), within 16 registers.
  static constexpr int kFewScoreRows = 2, kFewPvRows = 4;
  using F = __m256;
  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float x) { return _mm256_set1_ps(x); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static F abs(F a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.f), a); }
  static float hsum(F a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float hmax(F a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static F iota() { return _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7); }
  // Lane L of the result: a0..a3's sums over 128-bit lane L, in that order.
  static F quad_sums(F a0, F a1, F a2, F a3) {
    const F w0 = _mm256_add_ps(_mm256_unpacklo_ps(a0, a1), _mm256_unpackhi_ps(a0, a1));
    const F w1 = _mm256_add_ps(_mm256_unpacklo_ps(a2, a3), _mm256_unpackhi_ps(a2, a3));
    return _mm256_add_ps(
        _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(w0), _mm256_castps_pd(w1))),
        _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(w0), _mm256_castps_pd(w1))));
  }
  // 128-bit lanes added: [a0 + a1, b0 + b1].
  static F fold(F a, F b) {
    return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
  }
  // exp for x <= 0, the only arguments it gets (the softmax's s - m, tanh's -2|x|): no clamp
  // (two instructions of ~16); x < -87.33 (including -inf, whose reduction gives NaN) gives 0 by
  // the mask, NaN stays NaN.
  static F exp(F x) {
    const F under = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33654f), _CMP_LT_OQ);
    const F n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    F r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    F p = _mm256_set1_ps(1.f / 720);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
    // 2^n in one factor: n >= -126 wherever the mask keeps the result.
    const F s2n = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
    return _mm256_andnot_ps(under, _mm256_mul_ps(p, s2n));
  }
  // As the AVX-512 form (simd_avx512.hpp): the Taylor polynomial below |x| = 1/4.
  static F tanh(F x) {
    const F sign = _mm256_and_ps(x, _mm256_set1_ps(-0.f));
    const F ax = abs(x);
    const F e = exp(_mm256_mul_ps(ax, _mm256_set1_ps(-2.f)));
    const F t =
        _mm256_div_ps(_mm256_sub_ps(_mm256_set1_ps(1.f), e), _mm256_add_ps(_mm256_set1_ps(1.f), e));
    const F x2 = _mm256_mul_ps(ax, ax);
    F p = _mm256_fmadd_ps(_mm256_set1_ps(62.f / 2835), x2, _mm256_set1_ps(-17.f / 315));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.f / 15));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.f / 3));
    const F small = _mm256_fmadd_ps(_mm256_mul_ps(p, x2), ax, ax);
    const F r = _mm256_blendv_ps(t, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.25f), _CMP_LT_OQ));
    return _mm256_or_ps(r, sign);
  }
  static F mask_range(F key, float lo, float hi, F x) {
    const F in = _mm256_and_ps(_mm256_cmp_ps(key, _mm256_set1_ps(lo), _CMP_GE_OQ),
                               _mm256_cmp_ps(key, _mm256_set1_ps(hi), _CMP_LE_OQ));
    return _mm256_blendv_ps(_mm256_set1_ps(kNegInf), x, in);
  }
  static F load_bf16(const uint16_t* s) {
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  }
  // 16 bf16 values as two vectors, the even dims (word 2i of lane i, shifted into the high half)
  // and the odd ones (word 2i + 1: the high half as it lies), for PathF32's few-rows form: one
  // load and two ALU instructions where load_bf16 takes a widening load and a shift per 8 values.
  static void load_bf16_even_odd(const uint16_t* s, F (&x)[2]) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    x[0] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    x[1] = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(int(0xffff0000u))));
  }
  static F load_f16(const uint16_t* s) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  }
  // e4m3 -> fp16 bits: (magnitude << 7) is the same number scaled by 2^-8 (subnormals too). The
  // NaN code (magnitude 0x7f, else read as 480) gets fp16's all-ones exponent: NaN.
  static F load_e4m3(const uint8_t* s) {
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s)));
    const __m128i m = _mm_and_si128(b, _mm_set1_epi16(0x7f));
    const __m128i nan =
        _mm_and_si128(_mm_cmpeq_epi16(m, _mm_set1_epi16(0x7f)), _mm_set1_epi16(0x7c00));
    const __m128i h = _mm_or_si128(_mm_or_si128(_mm_slli_epi16(m, 7), nan),
                                   _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x80)), 8));
    return _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(256.f));
  }
  static F load_e5m2(const uint8_t* s) {
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s)));
    return _mm256_cvtph_ps(_mm_slli_epi16(b, 8));
  }
  // 16 codes as load_e4m3 / load_e5m2 convert 8, in dim order, for the few-rows form: the integer
  // steps on 16 words at once, then two conversions.
  static void load_e4m3_pair(const uint8_t* s, F (&x)[2]) {
    const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
    const __m256i m = _mm256_and_si256(b, _mm256_set1_epi16(0x7f));
    const __m256i nan =
        _mm256_and_si256(_mm256_cmpeq_epi16(m, _mm256_set1_epi16(0x7f)), _mm256_set1_epi16(0x7c00));
    const __m256i h =
        _mm256_or_si256(_mm256_or_si256(_mm256_slli_epi16(m, 7), nan),
                        _mm256_and_si256(_mm256_slli_epi16(b, 8), _mm256_set1_epi16(-0x8000)));
    x[0] = _mm256_mul_ps(_mm256_cvtph_ps(_mm256_castsi256_si128(h)), _mm256_set1_ps(256.f));
    x[1] = _mm256_mul_ps(_mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)), _mm256_set1_ps(256.f));
  }
  static void load_e5m2_pair(const uint8_t* s, F (&x)[2]) {
    const __m256i h = _mm256_slli_epi16(
        _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s))), 8);
    x[0] = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
    x[1] = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
  }
  static void transpose(const uint32_t* const* rows, int col, uint32_t* dst, int64_t ld) {
    transpose_rows(
        [&](int i) { return _mm256_loadu_ps(reinterpret_cast<const float*>(rows[i] + col)); }, dst,
        ld);
  }
  // The same with row i's 8 dwords given as row(i) (rows converted as they load).
  template <class Row>
  static void transpose_rows(Row row, uint32_t* dst, int64_t ld) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; ++i) r[i] = row(i);
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // t0: r0r1 cols {0,1 | 4,5}; t1: {2,3 | 6,7}; t2,t3 for r2r3, ...
    __m256 u[8];
    for (int i = 0; i < 2; ++i) {
      const __m256 a0 = t[4 * i], a1 = t[4 * i + 1], b0 = t[4 * i + 2], b1 = t[4 * i + 3];
      u[4 * i + 0] = _mm256_shuffle_ps(a0, b0, 0x44);  // col 0 | 4 (rows 4i..4i+3)
      u[4 * i + 1] = _mm256_shuffle_ps(a0, b0, 0xee);  // col 1 | 5
      u[4 * i + 2] = _mm256_shuffle_ps(a1, b1, 0x44);  // col 2 | 6
      u[4 * i + 3] = _mm256_shuffle_ps(a1, b1, 0xee);  // col 3 | 7
    }
    for (int c = 0; c < 4; ++c) {
      _mm256_storeu_ps(reinterpret_cast<float*>(dst + c * ld),
                       _mm256_permute2f128_ps(u[c], u[4 + c], 0x20));
      _mm256_storeu_ps(reinterpret_cast<float*>(dst + (c + 4) * ld),
                       _mm256_permute2f128_ps(u[c], u[4 + c], 0x31));
    }
  }
};

}  // namespace attnkit::cpu_flash::isa_avx2

#define ATTNKIT_ISA_NS isa_avx2
#define ATTNKIT_CPU_FLASH_FEW_ROWS 1
#include "backends/cpu_flash/kernel_impl.hpp"

namespace attnkit::cpu_flash {
const KernelFns& kernels_avx2() {
  static const KernelFns f{Isa::kAvx2, false, &isa_avx2::run_item};
  return f;
}
}  // namespace attnkit::cpu_flash

#pragma GCC pop_options

#else  // not x86-64: isa_supported() never selects this variant
namespace attnkit::cpu_flash {
const KernelFns& kernels_avx2() { return kernels_scalar(); }
}  // namespace attnkit::cpu_flash
#endif
