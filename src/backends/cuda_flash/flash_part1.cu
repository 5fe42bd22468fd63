// Manifest entries 1, 1 + kFlashParts, ... (see flash_launch.cuh).
#include "backends/cuda_flash/flash_launch.cuh"

namespace attnkit::cuda_flash {
void fill_flash_part1(FlashKernelEntry* table) {
  fill_flash_part<1>(table, std::make_index_sequence<kFlashManifest.size()>{});
}
}  // namespace attnkit::cuda_flash
