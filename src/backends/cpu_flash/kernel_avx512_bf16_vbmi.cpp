// The AVX512_BF16 variant built with AVX512_VBMI as well (Zen 4+, Sapphire Rapids and later with
// AMX not granted), which its few-rows form's fp8 loader uses (path_bf16.hpp, Fp8Quad):
// kernels_for takes this build of the variant wherever the CPU has VBMI, and
// kernel_avx512_bf16.cpp's elsewhere (Cooper Lake).
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "backends/cpu_flash/kernel.hpp"

#if defined(__x86_64__)
#include <immintrin.h>  // before the namespace that includes simd_avx512.hpp

// The variant's own code is built for its ISA from here to pop_options (kernel.hpp says why
// the shared headers above must not be).
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx512vbmi,fma,f16c")
#define ATTNKIT_CPU_FLASH_VBMI 1  // path_bf16.hpp's VBMI forms

namespace attnkit::cpu_flash::isa_avx512_bf16_vbmi {
#include "backends/cpu_flash/simd_avx512.hpp"
// few_rows.hpp needs Simd
#include "backends/cpu_flash/few_rows.hpp"
#include "backends/cpu_flash/path_bf16.hpp"
}  // namespace attnkit::cpu_flash::isa_avx512_bf16_vbmi

#define ATTNKIT_ISA_NS isa_avx512_bf16_vbmi
#define ATTNKIT_CPU_FLASH_FEW_ROWS 1
#define ATTNKIT_CPU_FLASH_BF16_PATH 1
#include "backends/cpu_flash/kernel_impl.hpp"

namespace attnkit::cpu_flash {
const KernelFns& kernels_avx512_bf16_vbmi() {
  static const KernelFns f{Isa::kAvx512Bf16, true, &isa_avx512_bf16_vbmi::run_item};
  return f;
}
}  // namespace attnkit::cpu_flash

#pragma GCC pop_options

#else  // not x86-64: isa_supported() never selects this variant
namespace attnkit::cpu_flash {
const KernelFns& kernels_avx512_bf16_vbmi() { return kernels_scalar(); }
}  // namespace attnkit::cpu_flash
#endif
