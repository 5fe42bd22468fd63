// v3's Hopper prefill kernels (flash_hopper.cuh), one per (head, dtype, cache kind) it covers;
// launched only through launch_flash (flash_dispatch.cu) when the plan picked kHopperPrefillForm.
#include <string>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/flash_hopper.cuh"
#include "backends/cuda_flash/flash_launch.cuh"

namespace attnkit::cuda_flash {
namespace {

template <int kD, typename T, bool kFp8>
struct HopperKernel {
  static constexpr auto kKernel = flash_hopper_kernel<kD, T, kFp8>;
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

// The heads the form is built for, one list for the launch and the shared-memory limits.
template <int... kD>
struct HopperHeads {
  static_assert((hopper_prefill_head(kD, kD) && ...), "tiles.hpp's rule covers every head");
  template <typename T, bool kFp8>
  static bool launch(int head, const FlashParams& p, int grid_m, cudaStream_t stream) {
    return ((head == kD ? (HopperKernel<kD, T, kFp8>::launch(p, grid_m, stream), true) : false) ||
            ...);
  }
  template <typename T>
  static void prepare() {
    (HopperKernel<kD, T, false>::prepare(), ...);
    (HopperKernel<kD, T, true>::prepare(), ...);
  }
};
using Heads = HopperHeads<64, 128, 256>;

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
        "CUDA_FLASH v3: the Hopper prefill form runs heads 64, 128 and 256 (got head " +
        std::to_string(inst.head_qk) + "/" + std::to_string(inst.head_v) + ")");
}

void prepare_flash_hopper() {
  Heads::prepare<__nv_bfloat16>();
  Heads::prepare<__half>();
}

}  // namespace attnkit::cuda_flash
