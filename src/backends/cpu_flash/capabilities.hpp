// CPU_FLASH: tiled online-softmax attention with SIMD, for serving on a CPU.
#pragma once

#include "attnkit/capability.hpp"

namespace attnkit {
const Capabilities& cpu_flash_capabilities();
}  // namespace attnkit
