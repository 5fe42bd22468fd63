// CUDA_MLA: MLA decode over the latent cache (QK 576 = 512 latent + 64 rope, V = the latent).
#pragma once

#include "attnkit/capability.hpp"

namespace attnkit {
const Capabilities& cuda_mla_capabilities();
}  // namespace attnkit
