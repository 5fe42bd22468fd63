// Manifest entries 2, 2 + kFlashParts, ... (see flash_launch.cuh).
#include "backends/cuda_flash/flash_launch.cuh"

namespace attnkit::cuda_flash {
void fill_flash_part2(FlashKernelEntry* table) {
  fill_flash_part<2>(table, std::make_index_sequence<kFlashManifest.size()>{});
}
}  // namespace attnkit::cuda_flash
