// AVX-512 variant with AVX512_BF16 (Cooper Lake, Sapphire Rapids, Zen 4+): the fp32 path plus the
// bf16 path for bf16 queries over a bf16 or fp8 cache (path_bf16.hpp). Its decode-sized items take
// the few-rows form on fp32 FMAs over bf16 rows (fp8 rows converted in registers), larger ones run
// both products on vdpbf16ps (32 bf16 multiply-adds per instruction into fp32) where that
// instruction issues fast enough (bf16_dots_pay), else the fp32 path. This build runs where the
// CPU lacks AVX512_VBMI (Cooper Lake); elsewhere the same variant runs from
// kernel_avx512_bf16_vbmi.cpp, and CPUs with AMX take the kAmxBf16 variant (kernel_amx_bf16.cpp).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <type_traits>

#include "backends/cpu_flash/kernel.hpp"

#if defined(__x86_64__)
#include <immintrin.h>  // before the namespace that includes simd_avx512.hpp

// The variant's own code is built for its ISA from here to pop_options (kernel.hpp says why
// the shared headers above must not be).
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma,f16c")

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

#include "backends/cpu_flash/path_bf16.hpp"
}  // namespace attnkit::cpu_flash::isa_avx512_bf16

#define ATTNKIT_ISA_NS isa_avx512_bf16
#define ATTNKIT_CPU_FLASH_FEW_ROWS 1
#define ATTNKIT_CPU_FLASH_BF16_PATH 1
#include "backends/cpu_flash/kernel_impl.hpp"

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
}  // namespace attnkit::cpu_flash

#pragma GCC pop_options

#else  // not x86-64: isa_supported() never selects this variant
namespace attnkit::cpu_flash {
double dpbf16_issue_ratio() { return 0.0; }
void stage_fp8_rows_bf16(KvCacheDType, bool, const uint8_t*, int, int, uint16_t*) {}
const KernelFns& kernels_avx512_bf16() { return kernels_scalar(); }
}  // namespace attnkit::cpu_flash
#endif
