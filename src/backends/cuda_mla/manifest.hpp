// The instantiation manifest of CUDA_MLA: the flash kernels' wide form over the latent cache
// (QK 576 = 512 latent + 64 rope, V = the latent's first 512 elements, read out of the K tile).
// The kernels and the capability declaration are both made from this one list; plain constexpr
// data, compiled in CPU-only builds too.
#pragma once

#include <array>

#include "backends/cuda_flash/manifest.hpp"

namespace attnkit::cuda_mla {

using cuda_flash::FlashInstance;
using cuda_flash::KvKind;

inline constexpr std::array<FlashInstance, 4> kMlaManifest = {{
    {576, 512, DType::kFloat16, KvKind::k16Bit},
    {576, 512, DType::kFloat16, KvKind::kFp8},
    {576, 512, DType::kBFloat16, KvKind::k16Bit},
    {576, 512, DType::kBFloat16, KvKind::kFp8},
}};

// Index of the instance that runs (head_qk, head_v, dtype, kv), or -1 when none is built.
constexpr int find_mla_instance(int head_qk, int head_v, DType dtype, KvKind kv) {
  for (size_t i = 0; i < kMlaManifest.size(); ++i) {
    const FlashInstance& f = kMlaManifest[i];
    if (f.head_qk == head_qk && f.head_v == head_v && f.dtype == dtype && f.kv == kv) return int(i);
  }
  return -1;
}

}  // namespace attnkit::cuda_mla
