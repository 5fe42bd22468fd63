// The CUDA_MLA backend object: MLA decode (and chunked prefill over the latent cache) on SM80+.
// It is CUDA_FLASH's host side (plan, split-KV, combine, CUDA-graph rules: cuda_flash_backend.hpp)
// over the MLA manifest's kernels; the KV cache view has no V tensor (V = the latent's first
// head_size_v elements of each K row). Throws Unsupported in a CPU-only build or without an SM80+
// GPU.
#pragma once

#include <memory>

#include "attnkit/attention.hpp"
#include "backends/cuda_flash/cuda_flash_backend.hpp"

namespace attnkit {

std::unique_ptr<AttentionBackend> make_cuda_mla_backend(const CudaFlashOptions& options = {});

}  // namespace attnkit
