// CUDA_FLASH: paged flash-attention kernels. Its capabilities are the union of the generations
// this release builds; each generation declares its own (see cuda_flash_generations()). The v2
// declaration is derived from the kernel manifest (manifest.hpp), the list the kernels are
// instantiated from, so it cannot claim a kernel that does not exist.
#pragma once

#include <vector>

#include "attnkit/capability.hpp"

namespace attnkit {
// v2 (portable mma.sync, SM80+), v3 (Hopper wgmma/TMA, SM90 only), v4 (Blackwell, declared only).
const std::vector<KernelGeneration>& cuda_flash_generations();
// What the backend accepts: the capabilities of its widest built generation.
const Capabilities& cuda_flash_capabilities();
// Whether this binary contains the v2 kernels (false in a CPU-only build, which still declares
// CUDA_FLASH so that planning for a GPU preset works).
bool cuda_flash_kernels_built();
}  // namespace attnkit
