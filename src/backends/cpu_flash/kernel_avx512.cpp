// AVX-512 variant without bf16 dot products (Skylake-X / Cascade Lake class): fp32 path only.
#include "backends/cpu_flash/kernel.hpp"

#if defined(__x86_64__)
#include <immintrin.h>  // before the namespace that includes simd_avx512.hpp

// The variant's own code is built for its ISA from here to pop_options (kernel.hpp says why
// the shared headers above must not be).
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")

namespace attnkit::cpu_flash::isa_avx512 {
#include "backends/cpu_flash/simd_avx512.hpp"
}  // namespace attnkit::cpu_flash::isa_avx512

#define ATTNKIT_ISA_NS isa_avx512
#define ATTNKIT_CPU_FLASH_FEW_ROWS 1
#include "backends/cpu_flash/kernel_impl.hpp"

namespace attnkit::cpu_flash {
const KernelFns& kernels_avx512() {
  static const KernelFns f{Isa::kAvx512, false, &isa_avx512::run_item};
  return f;
}
}  // namespace attnkit::cpu_flash

#pragma GCC pop_options

#else  // not x86-64: isa_supported() never selects this variant
namespace attnkit::cpu_flash {
const KernelFns& kernels_avx512() { return kernels_scalar(); }
}  // namespace attnkit::cpu_flash
#endif
