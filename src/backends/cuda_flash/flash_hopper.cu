// v3's Hopper prefill kernels (flash_hopper.cuh), one per (head, dtype, cache kind) it covers;
// launched only through launch_flash (flash_dispatch.cu) when the plan picked kHopperPrefillForm.
#include <string>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/flash_hopper.cuh"
#include "backends/cuda_flash/flash_launch.cuh"
#include "backends/cuda_flash/manifest.hpp"

namespace attnkit::cuda_flash {
namespace {

template <int kD, typename T, bool kFp8, bool kMm = false>
struct HopperKernel {
  static constexpr auto kKernel = flash_hopper_kernel<kD, T, kFp8, kMm>;
  static constexpr int kSmem = hopper_prefill_smem_bytes(kD, kFp8);
  static void launch(const FlashParams& p, int grid_m, cudaStream_t stream) {
    const dim3 grid(grid_m, p.num_kv_heads, p.num_seqs * p.num_splits);
    kKernel<<<grid, kHopperPrefillThreads, kSmem, stream>>>(p);
  }
  static void prepare() {
    cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    cudaFuncSetAttribute(kKernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  }
};

// The heads the form is built for, one list for the launch and the shared-memory limits; those
// of manifest.hpp's kMmPrefixHeads also for PrefixLM ranges (p.mm_offsets).
template <int kD, typename T, bool kFp8>
bool launch_head(const FlashParams& p, int grid_m, cudaStream_t stream) {
  if constexpr (mm_prefix_built(kD, kD)) {
    if (p.mm_offsets) return HopperKernel<kD, T, kFp8, true>::launch(p, grid_m, stream), true;
  }
  if (p.mm_offsets) return false;
  HopperKernel<kD, T, kFp8>::launch(p, grid_m, stream);
  return true;
}
template <int kD, typename T>
void prepare_head() {
  HopperKernel<kD, T, false>::prepare();
  HopperKernel<kD, T, true>::prepare();
  if constexpr (mm_prefix_built(kD, kD)) {
    HopperKernel<kD, T, false, true>::prepare();
    HopperKernel<kD, T, true, true>::prepare();
  }
}
template <int... kD>
struct HopperHeads {
  static_assert((hopper_prefill_head(kD, kD) && ...), "tiles.hpp's rule covers every head");
  // Every built head the rule admits has its kernel here (the v3 declaration is those heads).
  static constexpr bool covers_manifest() {
    for (auto [qk, v] : kFlashHeadPairs)
      if (hopper_prefill_head(qk, v) && ((qk != kD) && ...)) return false;
    return true;
  }
  static_assert(covers_manifest(), "a head of the manifest that the rule admits has no kernel");
  template <typename T, bool kFp8>
  static bool launch(int head, const FlashParams& p, int grid_m, cudaStream_t stream) {
    return ((head == kD && launch_head<kD, T, kFp8>(p, grid_m, stream)) || ...);
  }
  template <typename T>
  static void prepare() {
    (prepare_head<kD, T>(), ...);
  }
};
using Heads = HopperHeads<64, 80, 96, 128, 160, 192, 224, 256>;

}  // namespace

void launch_flash_hopper(const FlashInstance& inst, const FlashParams& p, int grid_m,
                         cudaStream_t stream) {
  const bool fp8 = inst.kv == KvKind::kFp8;
  const bool bf16 = inst.dtype == DType::kBFloat16;
  const bool launched =
      inst.head_qk == inst.head_v &&
      (fp8 ? (bf16 ? Heads::launch<__nv_bfloat16, true>(inst.head_qk, p, grid_m, stream)
                   : Heads::launch<__half, true>(inst.head_qk, p, grid_m, stream))
           : (bf16 ? Heads::launch<__nv_bfloat16, false>(inst.head_qk, p, grid_m, stream)
                   : Heads::launch<__half, false>(inst.head_qk, p, grid_m, stream)));
  if (!launched)
    throw Unsupported(
        "CUDA_FLASH v3: the Hopper prefill form runs heads 64, 80, 96, 128, 160, 192, 224 and 256 "
        "(qk = v), with PrefixLM ranges 128 and 256 (got head " +
        std::to_string(inst.head_qk) + "/" + std::to_string(inst.head_v) +
        (p.mm_offsets ? ", with ranges)" : ")"));
}

void prepare_flash_hopper() {
  Heads::prepare<__nv_bfloat16>();
  Heads::prepare<__half>();
}

}  // namespace attnkit::cuda_flash
