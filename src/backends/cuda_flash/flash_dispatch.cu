// The one dispatch point of the CUDA_FLASH kernels: v2's forms in a table indexed by manifest
// position, filled by the part files, and v3's Hopper prefill form (flash_hopper.cu) when the
// plan picked it (p.form). Callers find the index with find_flash_instance(); -1 is reported as
// Unsupported by the backend before any launch.
#include <string>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/flash_launch.cuh"
#include "backends/cuda_flash/launch.hpp"

namespace attnkit::cuda_flash {
namespace {

const FlashKernelEntry* flash_table() {
  static const auto table = [] {
    std::array<FlashKernelEntry, kFlashManifest.size()> t{};
    fill_flash_part0(t.data());
    fill_flash_part1(t.data());
    fill_flash_part2(t.data());
    fill_flash_part3(t.data());
    return t;
  }();
  return table.data();
}

}  // namespace

void prepare_flash_kernels(int cc) {
  for (size_t i = 0; i < kFlashManifest.size(); ++i) flash_table()[i].prepare();
  if (cc == 90) prepare_flash_hopper();
}

bool flash_has_split_keys(int instance) {
  return instance >= 0 && size_t(instance) < kFlashManifest.size() &&
         flash_table()[instance].has_split_keys;
}

void launch_flash(int instance, const FlashParams& p, int grid_m, bool split_keys, void* stream) {
  if (instance < 0 || size_t(instance) >= kFlashManifest.size())
    throw Unsupported("CUDA_FLASH: kernel instance " + std::to_string(instance) +
                      " is not in the manifest (size " + std::to_string(kFlashManifest.size()) +
                      ")");
  // Every kMmPrefixHeads instance has a kMm kernel in v2's prefill form and, at heads the Hopper
  // form runs, in that form too.
  if (p.mm_offsets && (split_keys || !flash_table()[instance].has_mm))
    throw Unsupported(
        "CUDA_FLASH: PrefixLM ranges run only the prefill forms at the heads of "
        "kMmPrefixHeads (instance " +
        std::to_string(instance) + " has " + (flash_table()[instance].has_mm ? "them" : "none") +
        "; the plan chose the " + (split_keys ? "decode" : "prefill") + " form)");
  // Every chunk_decode_built instance has kChunk kernels in v2's decode form.
  if (p.chunk && (!split_keys || !flash_table()[instance].has_chunk))
    throw Unsupported(
        "CUDA_FLASH: chunked local attention in the kernels runs only the decode "
        "form at the heads of kChunkDecodeHeads (instance " +
        std::to_string(instance) + "; the plan chose the " + (split_keys ? "decode" : "prefill") +
        " form)");
  if (p.form == kHopperPrefillForm)
    return launch_flash_hopper(kFlashManifest[size_t(instance)], p, grid_m,
                               static_cast<cudaStream_t>(stream));
  flash_table()[instance].launch(p, grid_m, split_keys, static_cast<cudaStream_t>(stream));
}

void launch_combine(DType dtype, const FlashParams& p, int64_t rows, bool pdl, void* stream) {
  const dim3 grid(static_cast<unsigned>(rows));  // one CTA per (token, head) row
  const auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::kBFloat16:
      return p.split_chunk ? launch_kernel(flash_combine_kernel<__nv_bfloat16, true>, grid,
                                           kThreads, 0, st, p, pdl, "combine")
                           : launch_kernel(flash_combine_kernel<__nv_bfloat16, false>, grid,
                                           kThreads, 0, st, p, pdl, "combine");
    case DType::kFloat16:
      return p.split_chunk ? launch_kernel(flash_combine_kernel<__half, true>, grid, kThreads, 0,
                                           st, p, pdl, "combine")
                           : launch_kernel(flash_combine_kernel<__half, false>, grid, kThreads, 0,
                                           st, p, pdl, "combine");
    default:
      throw Unsupported("CUDA_FLASH: dtype " + std::string(to_string(dtype)) +
                        " has no combine kernel; expected float16 or bfloat16");
  }
}

}  // namespace attnkit::cuda_flash
