// AVX-512 (F/BW/VL/DQ) traits for kernel_impl.hpp (W = 16); included by kernel_avx512.cpp and the
// bf16 variants' files (kernel_avx512_bf16*.cpp, kernel_amx_bf16.cpp) inside their ISA namespace,
// after they include <immintrin.h> outside it.
#pragma once

struct Simd {
  // kMR x kNR: the fp32 micro-GEMM's register block (rows x vectors). 6x4 (24 accumulators, 4
  // vector loads and 6 broadcasts per k) against 8x2, interleaved in one process on a 2-vCPU VM:
  // every prefill row 1.03-1.12x; 12x2 0.93-1.06x, 4x4 1.01-1.07x
  // (results/cpu_2026-12-01_s23_gemm_block_interleaved.txt). On the H200 host's 16 cores fp32 and
  // fp16 prefill 1.07-1.12x (results/cuda_s23_r3_host_cpu_interleaved.txt).
  static constexpr int W = 16, kMR = 6, kNR = 4;
  // The few-rows form's row blocks (few_rows.hpp): scores 4 rows x 4 keys of accumulators, P.V
  // 8 rows x 32 dims.
  static constexpr int kFewScoreRows = 4, kFewPvRows = 8;
  using F = __m512;
  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float x) { return _mm512_set1_ps(x); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static F abs(F a) { return _mm512_abs_ps(a); }
  static float hsum(F a) { return _mm512_reduce_add_ps(a); }
  static float hmax(F a) { return _mm512_reduce_max_ps(a); }
  static F iota() { return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
  // exp for x <= 0, the only arguments it gets (the softmax's s - m, tanh's -2|x|): no clamp
  // (two instructions of ~16); x < -87.33 (including -inf, whose reduction gives NaN) gives 0 by
  // the mask, NaN stays NaN.
  static F exp(F x) {
    const __mmask16 under = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.33654f), _CMP_LT_OQ);
    const F n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    F r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    F p = _mm512_set1_ps(1.f / 720);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 120));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 24));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 6));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
    return _mm512_maskz_mov_ps(__mmask16(~under), _mm512_scalef_ps(p, n));
  }
  // tanh(|x|) = (1 - e) / (1 + e), e = exp(-2|x|). Below |x| = 1/4 the subtraction cancels (an
  // error of one ulp of 1 over 2|x|: a softcap far above the logits gave s / cap ~ 1e-6 and logits
  // off by percents), so there the odd Taylor polynomial to x^9 (truncation below 2^-26).
  static F tanh(F x) {
    const F ax = _mm512_abs_ps(x);
    const F e = exp(_mm512_mul_ps(ax, _mm512_set1_ps(-2.f)));
    const F t =
        _mm512_div_ps(_mm512_sub_ps(_mm512_set1_ps(1.f), e), _mm512_add_ps(_mm512_set1_ps(1.f), e));
    const F x2 = _mm512_mul_ps(ax, ax);
    F p = _mm512_fmadd_ps(_mm512_set1_ps(62.f / 2835), x2, _mm512_set1_ps(-17.f / 315));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(2.f / 15));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-1.f / 3));
    const F small = _mm512_fmadd_ps(_mm512_mul_ps(p, x2), ax, ax);
    const F r =
        _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.25f), _CMP_LT_OQ), t, small);
    return _mm512_or_ps(r, _mm512_and_ps(x, _mm512_set1_ps(-0.f)));
  }
  static F mask_range(F key, float lo, float hi, F x) {
    const __mmask16 in = _mm512_cmp_ps_mask(key, _mm512_set1_ps(lo), _CMP_GE_OQ) &
                         _mm512_cmp_ps_mask(key, _mm512_set1_ps(hi), _CMP_LE_OQ);
    return _mm512_mask_blend_ps(in, _mm512_set1_ps(-__builtin_inff()), x);
  }
  static F load_bf16(const uint16_t* s) {
    const __m512i v =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
  static F load_f16(const uint16_t* s) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
  }
  // e4m3 -> fp16 bits: (magnitude << 7) is the same number scaled by 2^-8 (subnormals too). The
  // NaN code (magnitude 0x7f, else read as 480) becomes an fp16 NaN.
  static F load_e4m3(const uint8_t* s) {
    const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
    const __m256i m = _mm256_and_si256(b, _mm256_set1_epi16(0x7f));
    __m256i h = _mm256_or_si256(_mm256_slli_epi16(m, 7),
                                _mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x80)), 8));
    h = _mm256_mask_mov_epi16(h, _mm256_cmpeq_epi16_mask(m, _mm256_set1_epi16(0x7f)),
                              _mm256_set1_epi16(0x7e00));
    return _mm512_mul_ps(_mm512_cvtph_ps(h), _mm512_set1_ps(256.f));
  }
  static F load_e5m2(const uint8_t* s) {
    const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
    return _mm512_cvtph_ps(_mm256_slli_epi16(b, 8));
  }
  // Lane L of the result: a0..a3's sums over 128-bit lane L, in that order (per lane: even and
  // odd halves of a0, a1, then a0..a3).
  static F quad_sums(F a0, F a1, F a2, F a3) {
    const F w0 = _mm512_add_ps(_mm512_unpacklo_ps(a0, a1), _mm512_unpackhi_ps(a0, a1));
    const F w1 = _mm512_add_ps(_mm512_unpacklo_ps(a2, a3), _mm512_unpackhi_ps(a2, a3));
    return _mm512_add_ps(
        _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(w0), _mm512_castps_pd(w1))),
        _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(w0), _mm512_castps_pd(w1))));
  }
  // 128-bit lanes added pairwise: [a0 + a1, a2 + a3, b0 + b1, b2 + b3].
  static F fold(F a, F b) {
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x88), _mm512_shuffle_f32x4(a, b, 0xdd));
  }
  // dst[c * ld + i] = rows[i][col + c] for a 16 x 16 block of dwords.
  static void transpose(const uint32_t* const* rows, int col, uint32_t* dst, int64_t ld) {
    transpose_rows([&](int i) { return _mm512_loadu_ps(rows[i] + col); }, dst, ld);
  }
  // The same with row i's 16 dwords given as row(i) (rows converted as they load).
  template <class Row>
  static void transpose_rows(Row row, uint32_t* dst, int64_t ld) {
    __m512i r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_castps_si512(row(i));
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // u[4q + c]: rows 4q..4q+3, column 4L + c in 128-bit lane L.
    for (int q = 0; q < 4; ++q) {
      const __m512i a0 = t[4 * q], a1 = t[4 * q + 1], b0 = t[4 * q + 2], b1 = t[4 * q + 3];
      r[4 * q + 0] = _mm512_unpacklo_epi64(a0, b0);
      r[4 * q + 1] = _mm512_unpackhi_epi64(a0, b0);
      r[4 * q + 2] = _mm512_unpacklo_epi64(a1, b1);
      r[4 * q + 3] = _mm512_unpackhi_epi64(a1, b1);
    }
    // v: for c, half h: lanes (L0, L2) or (L1, L3) of rows 0-3 and rows 4-7 (and 8-15).
    for (int c = 0; c < 4; ++c) {
      const __m512i v0 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0x88);       // cols c, 8+c
      const __m512i v1 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0xdd);       // cols 4+c, 12+c
      const __m512i w0 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0x88);  // rows 8-15
      const __m512i w1 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0xdd);
      _mm512_storeu_si512(dst + (c)*ld, _mm512_shuffle_i32x4(v0, w0, 0x88));
      _mm512_storeu_si512(dst + (8 + c) * ld, _mm512_shuffle_i32x4(v0, w0, 0xdd));
      _mm512_storeu_si512(dst + (4 + c) * ld, _mm512_shuffle_i32x4(v1, w1, 0x88));
      _mm512_storeu_si512(dst + (12 + c) * ld, _mm512_shuffle_i32x4(v1, w1, 0xdd));
    }
  }
};
