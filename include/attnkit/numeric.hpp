// Host-side scalar conversions between float and the storage formats (fp16, bf16, fp8 e4m3 /
// e5m2, nvfp4 e2m1). Round-to-nearest-even; the fp8 and e2m1 encoders saturate to the largest
// finite value (NaN stays NaN where the format has one).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attnkit {

constexpr uint16_t float_to_bf16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
inline float bf16_bits_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

inline uint16_t float_to_fp16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u);    // NaN
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);   // rounds to >= 65520: inf
  if (abs >= 0x38800000u) {                                  // normal half
    uint32_t mant = abs + 0xc8000fffu + ((abs >> 13) & 1u);  // rebias + RNE
    return uint16_t(sign | (mant >> 13));
  }
  // Subnormal half (or zero): scale into integer units of 2^-24 with RNE.
  float af = std::bit_cast<float>(abs);
  float scaled = af * 16777216.0f;  // 2^24, exact
  return uint16_t(sign | uint32_t(std::nearbyint(scaled)));
}
inline float fp16_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

// Generic small-float encoder: `mbits` mantissa bits, exponent bias `bias`, largest finite `max`.
// Rounds to nearest even and saturates to +-max. Returns the magnitude bits (sign handled by the
// caller) for a finite non-negative input.
namespace detail {
inline uint32_t encode_small_float(float a, int mbits, int bias, float max_finite) {
  if (!(a < max_finite)) a = max_finite;  // also catches +inf
  if (a == 0.f) return 0;
  int e;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  int exp_unbiased = e - 1;
  int min_normal_exp = 1 - bias;
  int q_exp = exp_unbiased < min_normal_exp ? min_normal_exp : exp_unbiased;
  float quantum = std::ldexp(1.0f, q_exp - mbits);
  float q = std::nearbyint(a / quantum);  // mantissa units incl. implicit bit (RNE)
  uint32_t units = uint32_t(q);
  if (units >= (2u << mbits)) {  // rounded up into the next binade
    units >>= 1;
    ++q_exp;
  }
  float value = float(units) * std::ldexp(1.0f, q_exp - mbits);
  if (value > max_finite) return encode_small_float(max_finite, mbits, bias, max_finite);
  if (units < (1u << mbits)) return units;  // subnormal: exponent field 0
  uint32_t exp_field = uint32_t(q_exp + bias);
  return (exp_field << mbits) | (units & ((1u << mbits) - 1));
}
}  // namespace detail

constexpr float kFp8E4M3Max = 448.f;
constexpr float kFp8E5M2Max = 57344.f;
constexpr float kE2M1Max = 6.f;

namespace detail {
// 2^e as a float for normal exponents (-126..127): exact, and constexpr where std::ldexp is not.
constexpr float pow2f(int e) { return std::bit_cast<float>(uint32_t(e + 127) << 23); }
}  // namespace detail

// Bit-level encoders (the KV write's hot path): rebias the fp32 exponent, round the mantissa to
// nearest even, clamp to the largest finite code. detail::encode_small_float is their oracle in
// the tests.
inline uint8_t float_to_fp8_e4m3(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint8_t sign = uint8_t((u >> 24) & 0x80);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return 0x7f;                          // NaN
  if (abs >= 0x3c800000u) {                                    // >= 2^-6: normal e4m3
    uint32_t r = (abs + 0x7ffffu + ((abs >> 20) & 1u)) >> 20;  // RNE to 3 mantissa bits
    r -= 120u << 3;                                            // rebias 127 -> 7
    return uint8_t(sign | (r > 0x7eu ? 0x7eu : r));            // saturate at 448
  }
  // Subnormal: units of 2^-9 (8 units round up into the smallest normal, code 0x08).
  return uint8_t(sign | uint32_t(std::nearbyint(std::bit_cast<float>(abs) * 512.f)));
}
// The decoders are constexpr: CPU_FLASH builds its fp8 -> bf16 tables from them at compile time.
constexpr float fp8_e4m3_to_float(uint8_t b) {
  uint32_t exp = (b >> 3) & 0xf, mant = b & 0x7;
  if (exp == 0xf && mant == 0x7) return std::numeric_limits<float>::quiet_NaN();
  float v =
      exp == 0 ? float(mant) * detail::pow2f(-9) : float(8 + mant) * detail::pow2f(int(exp) - 10);
  return (b & 0x80) ? -v : v;
}
inline uint8_t float_to_fp8_e5m2(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint8_t sign = uint8_t((u >> 24) & 0x80);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return 0x7f;                          // NaN
  if (abs >= 0x38800000u) {                                    // >= 2^-14: normal e5m2
    uint32_t r = (abs + 0xfffffu + ((abs >> 21) & 1u)) >> 21;  // RNE to 2 mantissa bits
    r -= 112u << 2;                                            // rebias 127 -> 15
    return uint8_t(sign | (r > 0x7bu ? 0x7bu : r));            // saturate at 57344 (no inf)
  }
  return uint8_t(sign | uint32_t(std::nearbyint(std::bit_cast<float>(abs) * 65536.f)));
}
constexpr float fp8_e5m2_to_float(uint8_t b) {
  uint32_t exp = (b >> 2) & 0x1f, mant = b & 0x3;
  if (exp == 0x1f) {
    if (mant) return std::numeric_limits<float>::quiet_NaN();
    return (b & 0x80) ? -std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::infinity();
  }
  float v =
      exp == 0 ? float(mant) * detail::pow2f(-16) : float(4 + mant) * detail::pow2f(int(exp) - 17);
  return (b & 0x80) ? -v : v;
}

// nvfp4 element: e2m1 (1 sign, 2 exponent, 1 mantissa), values 0, 0.5, 1, 1.5, 2, 3, 4, 6.
inline uint8_t float_to_e2m1(float f) {
  if (std::isnan(f)) f = 0.f;  // e2m1 has no NaN; callers never feed one (scales guard)
  uint8_t sign = std::signbit(f) ? 0x8 : 0;
  return uint8_t(sign | detail::encode_small_float(std::fabs(f), 1, 1, kE2M1Max));
}
inline float e2m1_to_float(uint8_t nibble) {
  static constexpr float kValues[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  float v = kValues[nibble & 0x7];
  return (nibble & 0x8) ? -v : v;
}

}  // namespace attnkit
