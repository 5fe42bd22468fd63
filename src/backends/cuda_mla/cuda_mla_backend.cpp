#include "backends/cuda_mla/cuda_mla_backend.hpp"

#include "attnkit/error.hpp"
#include "backends/cuda_mla/capabilities.hpp"

#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
#include "backends/cuda_flash/family.hpp"
#include "backends/cuda_flash/tiles.hpp"
#include "backends/cuda_mla/mla_forms.hpp"
#include "backends/cuda_mla/mla_launch.hpp"
#include "backends/cuda_mla/mla_tiles.hpp"
#endif

namespace attnkit {

#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
namespace cuda_mla {

// The Hopper form on SM90 for plain logits (no softcap, ALiBi or sinks; a positive scale):
// even 16-head decode, with a quarter of its 64 rows live, ran as fast as or faster than the
// wide form's 32-row CTAs (bench/results/cuda_s13_r3_*, r4_*). The wide form otherwise.
cuda_flash::FlashGeometry mla_geometry(const AttentionLayerParams& L, int cc, int forced) {
  const bool plain = !L.sinks && !L.alibi_slopes && L.logits_soft_cap == 0.f && L.scale > 0.f;
  const bool can_hopper = cc == 90 && plain;
  if (forced == kHopperForm && !can_hopper)
    throw Unsupported(
        "CUDA_MLA: the Hopper form needs an SM90 GPU and plain logits (no softcap, ALiBi or "
        "sinks; a positive scale)");
  // A sequence of at most four row blocks is decode-sized (tiles.hpp batch_parts): a decode at
  // 128 heads fills two of the Hopper form's blocks (four of the wide form's), a prefill chunk
  // hundreds, which one launch's grid would give every decode too.
  constexpr int kDecodeBlocks = 4;
  if (forced ? forced == kHopperForm : can_hopper)
    return {.form = kHopperForm,
            .block_m = kHopperRows,
            .tile_keys = kHopperKeys,
            .cta_smem = hopper_smem_bytes(false) + kHopperStaticSmem,
            .ragged = true,
            .part_rows = kDecodeBlocks * kHopperRows};
  return {.form = kWideForm,
          .block_m = cuda_flash::kWideBlockM,
          .tile_keys = cuda_flash::kWideBlockN,
          .cta_smem = cuda_flash::flash_smem_bytes(kLatent, kLatentV, false, false, true) +
                      cuda_flash::flash_static_smem_bytes(kLatent, kLatentV, false, false),
          .part_rows = kDecodeBlocks * cuda_flash::kWideBlockM};
}

}  // namespace cuda_mla
#endif

std::unique_ptr<AttentionBackend> make_cuda_mla_backend(const CudaFlashOptions& options) {
#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
  static const cuda_flash::FlashFamily family{"CUDA_MLA",
                                              cuda_mla_capabilities,
                                              true,
                                              cuda_mla::find_mla_instance,
                                              cuda_mla::launch_mla,
                                              cuda_mla::mla_has_split_keys,
                                              cuda_mla::prepare_mla_kernels,
                                              cuda_mla::kMaxLatentBytes,
                                              cuda_mla::mla_geometry};
  return cuda_flash::make_flash_family_backend(family, options);
#else
  (void)options;
  throw Unsupported("CUDA_MLA kernels are not in this build (configure with the cuda preset)");
#endif
}

}  // namespace attnkit
