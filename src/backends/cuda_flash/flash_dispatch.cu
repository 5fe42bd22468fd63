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

// kBatch 16 loads up to 64 splits' partials in the combine's first batch, one L2 round trip
// fewer than 8 where a plan has 33..64 splits (H200: fp8 1x32k 32/4 -1.3% a layer; H100: CUDA_MLA
// 1x32k -5..-7%); at 2..32 splits the larger kernel cost the layer loop 1-6% (16x8k, 1x32k 32/8;
// bench/NOTES.md, session 53), so it runs only above 32 splits.
template <typename T>
void launch_combine_t(const FlashParams& p, dim3 grid, bool pdl, cudaStream_t st) {
  const bool wide = p.num_splits > 32;
  const auto kernel =
      p.split_chunk
          ? (wide ? flash_combine_kernel<T, true, 16> : flash_combine_kernel<T, true, 8>)
          : (wide ? flash_combine_kernel<T, false, 16> : flash_combine_kernel<T, false, 8>);
  launch_kernel(kernel, grid, kThreads, 0, st, p, pdl, "combine");
}

void launch_combine(DType dtype, const FlashParams& p, int64_t rows, bool pdl, void* stream) {
  const dim3 grid(static_cast<unsigned>(rows));  // one CTA per (token, head) row
  const auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::kBFloat16:
      return launch_combine_t<__nv_bfloat16>(p, grid, pdl, st);
    case DType::kFloat16:
      return launch_combine_t<__half>(p, grid, pdl, st);
    default:
      throw Unsupported("CUDA_FLASH: dtype " + std::string(to_string(dtype)) +
                        " has no combine kernel; expected float16 or bfloat16");
  }
}

}  // namespace attnkit::cuda_flash
