// The host side of the flash kernels (plan, validation, split-KV workspace, launch, combine) runs
// any family of kernels that takes FlashParams: CUDA_FLASH's own manifest, or CUDA_MLA's
// latent-cache kernels (mla_kernels.cu). CUDA builds only.
#pragma once

#include <memory>
#include <string_view>

#include "attnkit/attention.hpp"
#include "backends/cuda_flash/cuda_flash_backend.hpp"
#include "backends/cuda_flash/launch.hpp"
#include "backends/cuda_flash/manifest.hpp"

namespace attnkit::cuda_flash {

// The CTA shape of the kernel form a plan picked: its grid and split count are computed from it.
struct FlashGeometry {
  int form;             // FlashParams::form for the launcher
  int block_m;          // packed rows per CTA
  int tile_keys;        // keys per tile
  int cta_smem;         // shared memory per CTA (dynamic and static)
  bool ragged = false;  // the form is also built for ragged plans (a split count per sequence)
  // A family's forms: a sequence of at most this many packed rows is decode-sized, so a batch of
  // decodes and chunks runs as two parts (tiles.hpp batch_parts); 0: every batch is one part.
  int part_rows = 0;
};

struct FlashFamily {
  std::string_view name;  // the backend's name, in its errors too
  const Capabilities& (*capabilities)();
  // V rows are the leading head_v elements of the K rows (MLA's latent cache, whose view has no
  // V tensor); otherwise K and V are separate tensors.
  bool v_in_k;
  int (*find_instance)(int head_qk, int head_v, DType dtype, KvKind kv);  // -1: not built
  void (*launch)(int instance, const FlashParams& p, int grid_m, bool split_keys, void* stream);
  bool (*has_split_keys)(int instance);
  // Once per backend object, outside any graph capture, for the device's compute capability.
  void (*prepare)(int cc);
  // Largest K tensor (num_blocks x stride_block bytes) the kernels address; 0 = no limit.
  int64_t max_k_bytes;
  // The form for a layer on a device of compute capability cc (CudaFlashOptions::mla_form may
  // force one; Unsupported when the layer or device cannot take it); nullptr: CUDA_FLASH's own
  // forms (tiles.hpp), picked by the batch's rows.
  FlashGeometry (*geometry)(const AttentionLayerParams& layer, int cc, int forced_form);
};

std::unique_ptr<AttentionBackend> make_flash_family_backend(const FlashFamily& family,
                                                            const CudaFlashOptions& options);

}  // namespace attnkit::cuda_flash
