// Manifest entries 0, 0 + kFlashParts, ... (see flash_launch.cuh).
#include "backends/cuda_flash/flash_launch.cuh"

namespace attnkit::cuda_flash {
void fill_flash_part0(FlashKernelEntry* table) {
  fill_flash_part<0>(table, std::make_index_sequence<kFlashManifest.size()>{});
}
}  // namespace attnkit::cuda_flash
