// CUDA_FLASH: paged flash-attention kernels. Its capabilities are the union of the generations
// this release builds; each generation declares its own (see cuda_flash_generations()). The v2
// declaration is derived from the kernel manifest (manifest.hpp), the list the kernels are
// instantiated from, so it cannot claim a kernel that does not exist.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "attnkit/capability.hpp"
#include "backends/cuda_flash/manifest.hpp"

namespace attnkit {
// v2 (portable mma.sync, SM80+), v3 (Hopper wgmma/TMA, SM90 only), v4 (Blackwell, declared only).
const std::vector<KernelGeneration>& cuda_flash_generations();
// What the backend accepts: the capabilities of its widest built generation.
const Capabilities& cuda_flash_capabilities();
// Whether this binary contains the v2 kernels (false in a CPU-only build, which still declares
// CUDA_FLASH so that planning for a GPU preset works).
bool cuda_flash_kernels_built();

namespace cuda_flash {
// What a kernel manifest states, for the declarations made from one (CUDA_FLASH v2, CUDA_MLA):
// head sizes and asymmetric (qk, v) pairs, dtypes, and KV cache dtypes (a 16-bit instance serves
// auto and the cache of its own dtype; one fp8 instance reads both formats).
void declare_manifest(Capabilities& c, std::span<const FlashInstance> manifest);
// The combination rule of such a declaration: why no instance `find` knows runs the layer.
std::vector<std::string> manifest_reasons(const LayerSpec& spec,
                                          int (*find)(int head_qk, int head_v, DType, KvKind));
}  // namespace cuda_flash
}  // namespace attnkit
