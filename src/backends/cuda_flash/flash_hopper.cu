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

template <typename T>
void launch_typed(int head, const FlashParams& p, int grid_m, cudaStream_t stream) {
  switch (head) {
    case 64:
      return HopperKernel<64, T>::launch(p, grid_m, stream);
    case 128:
      return HopperKernel<128, T>::launch(p, grid_m, stream);
    case 256:
      return HopperKernel<256, T>::launch(p, grid_m, stream);
  }
  throw Unsupported("CUDA_FLASH v3: no Hopper prefill kernel for head size " +
                    std::to_string(head) + "; expected 64, 128 or 256");
}

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
    return launch_typed<__nv_bfloat16>(inst.head_qk, p, grid_m, stream);
  launch_typed<__half>(inst.head_qk, p, grid_m, stream);
}

void prepare_flash_hopper() {
  HopperKernel<64, __nv_bfloat16>::prepare();
  HopperKernel<128, __nv_bfloat16>::prepare();
  HopperKernel<256, __nv_bfloat16>::prepare();
  HopperKernel<64, __half>::prepare();
  HopperKernel<128, __half>::prepare();
  HopperKernel<256, __half>::prepare();
}

}  // namespace attnkit::cuda_flash
