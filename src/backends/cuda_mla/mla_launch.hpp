// Host entry points of CUDA_MLA's kernels (mla_kernels.cu, CUDA builds only), in the shape
// cuda_flash::FlashFamily takes.
#pragma once

#include "backends/cuda_flash/flash_params.hpp"
#include "backends/cuda_mla/manifest.hpp"

namespace attnkit::cuda_mla {

// Raises the kernels' shared-memory limits on a device of compute capability cc (the Hopper
// form's only on SM90).
void prepare_mla_kernels(int cc);
void launch_mla(int instance, const cuda_flash::FlashParams& p, int grid_m, bool split_keys,
                void* stream);
bool mla_has_split_keys(int instance);

}  // namespace attnkit::cuda_mla
