// Host scalar conversions: round trips, round-to-nearest-even ties, saturation, NaN.
#include "attnkit/numeric.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace attnkit {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Bf16, RoundTripsEveryNonNanPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_bits_to_float(uint16_t(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16_bits(f), b) << std::hex << b;
  }
}

TEST(Bf16, RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even mantissa (1) wins.
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(1.0f + std::ldexp(1.f, -8))), 1.0f);
  // 1 + 3*2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.f, -8))),
            1.0f + std::ldexp(1.f, -6));
  // Just above the halfway point rounds up.
  EXPECT_EQ(
      bf16_bits_to_float(float_to_bf16_bits(1.0f + std::ldexp(1.f, -8) + std::ldexp(1.f, -20))),
      1.0f + std::ldexp(1.f, -7));
}

TEST(Bf16, NanAndInfinity) {
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(kNaN))));
  // A NaN whose payload lives only in the low bits must not become infinity.
  const float low_nan = std::bit_cast<float>(0x7f800001u);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(low_nan))));
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(kInf)), kInf);
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(-kInf)), -kInf);
}

TEST(Fp16, RoundTripsEveryNonNanPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_bits_to_float(uint16_t(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_fp16_bits(f), h) << std::hex << h;
  }
}

TEST(Fp16, RoundsToNearestEvenIncludingSubnormals) {
  auto rt = [](float f) { return fp16_bits_to_float(float_to_fp16_bits(f)); };
  EXPECT_EQ(rt(1.0f + std::ldexp(1.f, -11)), 1.0f);
  EXPECT_EQ(rt(1.0f + 3 * std::ldexp(1.f, -11)), 1.0f + std::ldexp(1.f, -9));
  EXPECT_EQ(rt(std::ldexp(1.f, -25)), 0.0f);                      // tie to 0 (even)
  EXPECT_EQ(rt(3 * std::ldexp(1.f, -25)), std::ldexp(1.f, -23));  // tie to 2 units
  EXPECT_EQ(rt(std::ldexp(1.f, -24)), std::ldexp(1.f, -24));      // smallest subnormal
  EXPECT_EQ(rt(65504.f), 65504.f);
  EXPECT_EQ(rt(65519.f), 65504.f);  // below the halfway point to 65536
  EXPECT_EQ(rt(65520.f), kInf);     // rounds to 65536: overflow
  EXPECT_EQ(rt(-1e9f), -kInf);
  EXPECT_TRUE(std::isnan(rt(kNaN)));
  EXPECT_EQ(float_to_fp16_bits(-0.0f), 0x8000);
}

TEST(Fp8E4M3, RoundTripsEveryFiniteCode) {
  for (uint32_t b = 0; b < 256; ++b) {
    const float f = fp8_e4m3_to_float(uint8_t(b));
    if (std::isnan(f)) {
      EXPECT_EQ(b & 0x7f, 0x7fu);  // only S.1111.111 is NaN; e4m3 has no infinity
      continue;
    }
    ASSERT_EQ(float_to_fp8_e4m3(f), b) << b << " = " << f;
  }
}

TEST(Fp8E4M3, SaturatesTo448) {
  EXPECT_EQ(fp8_e4m3_to_float(0x7e), 448.f);
  EXPECT_EQ(fp8_e4m3_to_float(float_to_fp8_e4m3(448.f)), 448.f);
  EXPECT_EQ(fp8_e4m3_to_float(float_to_fp8_e4m3(464.f)), 448.f);  // halfway to 480
  EXPECT_EQ(fp8_e4m3_to_float(float_to_fp8_e4m3(1e6f)), 448.f);
  EXPECT_EQ(fp8_e4m3_to_float(float_to_fp8_e4m3(kInf)), 448.f);
  EXPECT_EQ(fp8_e4m3_to_float(float_to_fp8_e4m3(-kInf)), -448.f);
  EXPECT_EQ(fp8_e4m3_to_float(float_to_fp8_e4m3(-500.f)), -448.f);
}

TEST(Fp8E4M3, RoundsToNearestEvenAndKeepsNan) {
  auto rt = [](float f) { return fp8_e4m3_to_float(float_to_fp8_e4m3(f)); };
  EXPECT_EQ(rt(1.0625f), 1.0f);                             // between 1 and 1.125: even (1)
  EXPECT_EQ(rt(1.1875f), 1.25f);                            // between 1.125 and 1.25: even (1.25)
  EXPECT_EQ(rt(std::ldexp(1.f, -9)), std::ldexp(1.f, -9));  // smallest subnormal
  EXPECT_EQ(rt(std::ldexp(1.f, -10)), 0.f);                 // tie to zero
  EXPECT_EQ(rt(3 * std::ldexp(1.f, -10)), std::ldexp(1.f, -8));  // tie to 2 units
  EXPECT_EQ(rt(0.0146484375f), 0.015625f);  // 15 * 2^-10: subnormal rounding up to 2^-6
  EXPECT_TRUE(std::isnan(rt(kNaN)));
  EXPECT_EQ(float_to_fp8_e4m3(-0.0f), 0x80);
}

TEST(Fp8E5M2, RoundTripsEveryFiniteCode) {
  for (uint32_t b = 0; b < 256; ++b) {
    const float f = fp8_e5m2_to_float(uint8_t(b));
    if (!std::isfinite(f)) continue;
    ASSERT_EQ(float_to_fp8_e5m2(f), b) << b << " = " << f;
  }
}

TEST(Fp8E5M2, SaturatesTo57344AndKeepsNan) {
  auto rt = [](float f) { return fp8_e5m2_to_float(float_to_fp8_e5m2(f)); };
  EXPECT_EQ(fp8_e5m2_to_float(0x7b), 57344.f);
  EXPECT_EQ(rt(57344.f), 57344.f);
  EXPECT_EQ(rt(61440.f), 57344.f);  // halfway to 65536
  EXPECT_EQ(rt(1e9f), 57344.f);
  EXPECT_EQ(rt(kInf), 57344.f);
  EXPECT_EQ(rt(-kInf), -57344.f);
  EXPECT_TRUE(std::isnan(rt(kNaN)));
  EXPECT_EQ(fp8_e5m2_to_float(0x7c), kInf);                   // the format's infinity still decodes
  EXPECT_EQ(rt(1.125f), 1.0f);                                // tie between 1 and 1.25: even
  EXPECT_EQ(rt(1.375f), 1.5f);                                // tie between 1.25 and 1.5: even
  EXPECT_EQ(rt(std::ldexp(1.f, -16)), std::ldexp(1.f, -16));  // smallest subnormal
}

TEST(E2M1, ValuesAndRoundTrip) {
  const float values[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  for (uint8_t n = 0; n < 16; ++n) {
    const float v = e2m1_to_float(n);
    EXPECT_EQ(std::fabs(v), values[n & 7]);
    EXPECT_EQ(std::signbit(v), (n & 8) != 0);
    EXPECT_EQ(float_to_e2m1(v), n) << int(n);
  }
}

TEST(E2M1, RoundsToNearestEvenSaturatesAndMapsNanToZero) {
  auto rt = [](float f) { return e2m1_to_float(float_to_e2m1(f)); };
  EXPECT_EQ(rt(0.25f), 0.f);  // tie between 0 and 0.5
  EXPECT_EQ(rt(0.75f), 1.f);  // tie between 0.5 and 1
  EXPECT_EQ(rt(1.25f), 1.f);  // tie between 1 and 1.5
  EXPECT_EQ(rt(1.75f), 2.f);  // tie between 1.5 and 2
  EXPECT_EQ(rt(2.5f), 2.f);   // tie between 2 and 3
  EXPECT_EQ(rt(3.5f), 4.f);   // tie between 3 and 4
  EXPECT_EQ(rt(5.f), 4.f);    // tie between 4 and 6
  EXPECT_EQ(rt(5.1f), 6.f);
  EXPECT_EQ(rt(7.f), 6.f);
  EXPECT_EQ(rt(100.f), 6.f);
  EXPECT_EQ(rt(-100.f), -6.f);
  EXPECT_EQ(rt(kInf), 6.f);
  EXPECT_EQ(rt(kNaN), 0.f);
  EXPECT_EQ(kE2M1Max, 6.f);
}

}  // namespace
}  // namespace attnkit

namespace attnkit {
namespace {

// The bit-level fp8 encoders against the generic small-float encoder, on every code's value, the
// midpoints between neighbouring codes (ties go to even), and random values over the whole range.
TEST(Numeric, Fp8BitEncodersMatchTheGenericEncoder) {
  auto generic_e4m3 = [](float f) {
    return uint8_t((std::signbit(f) ? 0x80 : 0) |
                   detail::encode_small_float(std::fabs(f), 3, 7, kFp8E4M3Max));
  };
  auto generic_e5m2 = [](float f) {
    return uint8_t((std::signbit(f) ? 0x80 : 0) |
                   detail::encode_small_float(std::fabs(f), 2, 15, kFp8E5M2Max));
  };
  std::vector<float> probes;
  for (int b = 0; b < 0x7e; ++b) {
    const float lo = fp8_e4m3_to_float(uint8_t(b)), hi = fp8_e4m3_to_float(uint8_t(b + 1));
    probes.insert(probes.end(), {lo, (lo + hi) / 2, std::nextafter((lo + hi) / 2, 0.f)});
  }
  for (int b = 0; b < 0x7b; ++b) {
    const float lo = fp8_e5m2_to_float(uint8_t(b)), hi = fp8_e5m2_to_float(uint8_t(b + 1));
    probes.insert(probes.end(), {lo, (lo + hi) / 2, std::nextafter((lo + hi) / 2, INFINITY)});
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-20.f, 18.f), unit(1.f, 2.f);
  for (int i = 0; i < 200000; ++i)
    probes.push_back(unit(rng) * std::exp2(std::floor(exponent(rng))));
  for (float p : probes)
    for (float f : {p, -p}) {
      ASSERT_EQ(float_to_fp8_e4m3(f), generic_e4m3(f)) << f;
      ASSERT_EQ(float_to_fp8_e5m2(f), generic_e5m2(f)) << f;
    }
}

}  // namespace
}  // namespace attnkit
