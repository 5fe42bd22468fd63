// v3's Hopper prefill kernels (flash_hopper.cuh), one per (head, dtype) it covers; launched only
// through launch_flash (flash_dispatch.cu) when the plan picked kHopperPrefillForm.
#include <string>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/flash_hopper.cuh"
#include "backends/cuda_flash/flash_launch.cuh"

namespace attnkit::cuda_flash {
namespace {

template <int kD, typename T>
struct HopperKernel {
  static constexpr auto kKernel = flash_hopper_kernel<kD, T>;
  static constexpr int kSmem = hopper_prefill_smem_bytes(kD);
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
  template <typename T>
  static void launch(int head, const FlashParams& p, int grid_m, cudaStream_t stream) {
    if (!((head == kD ? (HopperKernel<kD, T>::launch(p, grid_m, stream), true) : false) || ...))
      throw Unsupported("CUDA_FLASH v3: no Hopper prefill kernel for head size " +
                        std::to_string(head));
  }
  static void prepare() {
    (HopperKernel<kD, __nv_bfloat16>::prepare(), ...);
    (HopperKernel<kD, __half>::prepare(), ...);
  }
};
using Heads = HopperHeads<64, 128, 256>;

}  // namespace

void launch_flash_hopper(const FlashInstance& inst, const FlashParams& p, int grid_m,
                         cudaStream_t stream) {
  if (inst.kv != KvKind::k16Bit || !hopper_prefill_head(inst.head_qk, inst.head_v))
    throw Unsupported(
        "CUDA_FLASH v3: the Hopper prefill form runs 16-bit caches at heads 64, "
        "128 and 256 only (got head " +
        std::to_string(inst.head_qk) + "/" + std::to_string(inst.head_v) +
        (inst.kv == KvKind::kFp8 ? ", fp8 KV)" : ")"));
  if (inst.dtype == DType::kBFloat16)
    return Heads::launch<__nv_bfloat16>(inst.head_qk, p, grid_m, stream);
  Heads::launch<__half>(inst.head_qk, p, grid_m, stream);
}

void prepare_flash_hopper() { Heads::prepare(); }

}  // namespace attnkit::cuda_flash
