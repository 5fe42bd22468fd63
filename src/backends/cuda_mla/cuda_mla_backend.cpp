#include "backends/cuda_mla/cuda_mla_backend.hpp"

#include "attnkit/error.hpp"
#include "backends/cuda_mla/capabilities.hpp"

#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
#include "backends/cuda_flash/family.hpp"
#include "backends/cuda_mla/mla_launch.hpp"
#endif

namespace attnkit {

std::unique_ptr<AttentionBackend> make_cuda_mla_backend(const CudaFlashOptions& options) {
#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
  static const cuda_flash::FlashFamily family{"CUDA_MLA",
                                              cuda_mla_capabilities,
                                              true,
                                              cuda_mla::find_mla_instance,
                                              cuda_mla::launch_mla,
                                              cuda_mla::mla_has_split_keys,
                                              cuda_mla::prepare_mla_kernels,
                                              cuda_mla::kMaxLatentBytes};
  return cuda_flash::make_flash_family_backend(family, options);
#else
  (void)options;
  throw Unsupported("CUDA_MLA kernels are not in this build (configure with the cuda preset)");
#endif
}

}  // namespace attnkit
