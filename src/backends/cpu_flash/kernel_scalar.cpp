// Portable variant: no SIMD assumptions (W = 1).
#include <bit>
#include <cmath>

#include "backends/cpu_flash/kernel.hpp"

namespace attnkit::cpu_flash::isa_scalar {

struct Simd {
  static constexpr int W = 1, kMR = 4, kNR = 4;
  using F = float;
  static F zero() { return 0.f; }
  static F set1(float x) { return x; }
  static F load(const float* p) { return *p; }
  static void store(float* p, F v) { *p = v; }
  static F fma(F a, F b, F c) { return a * b + c; }
  static F add(F a, F b) { return a + b; }
  static F sub(F a, F b) { return a - b; }
  static F mul(F a, F b) { return a * b; }
  static F max(F a, F b) { return a > b ? a : b; }
  static F abs(F a) { return std::fabs(a); }
  static float hsum(F a) { return a; }
  static float hmax(F a) { return a; }
  static F iota() { return 0.f; }
  static F exp(F x) { return std::exp(x); }
  static F tanh(F x) { return std::tanh(x); }
  static F mask_range(F key, float lo, float hi, F x) {
    return key >= lo && key <= hi ? x : kNegInf;
  }
  static F load_bf16(const uint16_t* s) { return bf16_bits_to_float(*s); }
  static F load_f16(const uint16_t* s) { return fp16_bits_to_float(*s); }
  static F load_e4m3(const uint8_t* s) { return fp8_e4m3_to_float(*s); }
  static F load_e5m2(const uint8_t* s) { return fp8_e5m2_to_float(*s); }
  static void transpose(const uint32_t* const* rows, int col, uint32_t* dst, int64_t) {
    *dst = rows[0][col];
  }
  template <class Row>
  static void transpose_rows(Row row, uint32_t* dst, int64_t) {
    *dst = std::bit_cast<uint32_t>(row(0));
  }
};

}  // namespace attnkit::cpu_flash::isa_scalar

#define ATTNKIT_ISA_NS isa_scalar
#include "backends/cpu_flash/kernel_impl.hpp"

namespace attnkit::cpu_flash {
const KernelFns& kernels_scalar() {
  static const KernelFns f{Isa::kScalar, false, &isa_scalar::run_item};
  return f;
}
}  // namespace attnkit::cpu_flash
