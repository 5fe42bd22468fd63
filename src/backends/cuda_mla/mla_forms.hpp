// CUDA_MLA's choice of kernel form for a layer on a device (host code of CUDA builds; the plan
// calls it through cuda_flash::FlashFamily::geometry). Separate so that host tests check the rule
// without a GPU.
#pragma once

#include "attnkit/attention.hpp"
#include "backends/cuda_flash/family.hpp"

namespace attnkit::cuda_mla {

// The form (mla_tiles.hpp) and its CTA shape for `layer` on compute capability `cc`;
// `forced_form` (CudaFlashOptions::mla_form) forces one, and a forced Hopper form the layer or
// device cannot take throws Unsupported.
cuda_flash::FlashGeometry mla_geometry(const AttentionLayerParams& layer, int cc, int forced_form);

}  // namespace attnkit::cuda_mla
