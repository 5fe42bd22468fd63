// CPU_FLASH: tiled online-softmax attention for serving on a CPU (docs/semantics.md), with
// runtime ISA dispatch (AMX, AVX-512 + bf16 dot products, AVX-512, AVX2, scalar), a thread pool
// over (request, KV head, query block, KV split) and an LSE merge for split long decodes.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "attnkit/attention.hpp"

namespace attnkit {

namespace cpu_flash {
enum class Isa { kScalar, kAvx2, kAvx512, kAvx512Bf16, kAmxBf16 };
std::string_view to_string(Isa isa);
// Best variant this CPU and OS support: AVX-512 needs F/BW/VL/DQ (+AVX512_BF16 for the bf16
// variant), AVX2 needs AVX2/FMA/F16C; AMX needs AMX-TILE/AMX-BF16 and AVX512_VBMI (fp8 staging)
// on top of the bf16 variant, and the OS's permission for the tile state (requested once per
// process).
Isa detect_isa();
bool isa_supported(Isa isa);
}  // namespace cpu_flash

struct CpuFlashOptions {
  std::optional<cpu_flash::Isa> isa;  // default: detect_isa(); an unsupported one throws
  int num_threads = 0;  // 0: ATTNKIT_NUM_THREADS, else std::thread::hardware_concurrency()
};

std::unique_ptr<AttentionBackend> make_cpu_flash_backend();
std::unique_ptr<AttentionBackend> make_cpu_flash_backend(const CpuFlashOptions& options);

}  // namespace attnkit
