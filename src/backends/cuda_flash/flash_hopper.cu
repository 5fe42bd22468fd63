// v3's Hopper prefill kernels (flash_hopper.cuh), one per (head pair, dtype, cache kind) it covers;
// launched only through launch_flash (flash_dispatch.cu) when the plan picked kHopperPrefillForm.
#include <string>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/flash_hopper.cuh"
#include "backends/cuda_flash/flash_launch.cuh"
#include "backends/cuda_flash/manifest.hpp"

namespace attnkit::cuda_flash {
namespace {

template <int kD, int kDv, typename T, bool kFp8, bool kMm = false>
struct HopperKernel {
  static constexpr auto kKernel = flash_hopper_kernel<kD, kDv, T, kFp8, kMm>;
  static constexpr int kSmem = hopper_prefill_smem_bytes(kD, kDv, kFp8);
  static void launch(const FlashParams& p, int grid_m, cudaStream_t stream) {
    const dim3 grid(grid_m, p.num_kv_heads, p.num_seqs * p.num_splits);
    kKernel<<<grid, kHopperPrefillThreads, kSmem, stream>>>(p);
  }
  static void prepare() {
    cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    cudaFuncSetAttribute(kKernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  }
};

// One (qk, v) pair the form is built for: its kernels for the launch and the shared-memory
// limits, those of manifest.hpp's kMmPrefixHeads also for PrefixLM ranges (p.mm_offsets).
template <int kD, int kDv>
struct HopperHead {
  static constexpr int kQk = kD, kV = kDv;
  static_assert(hopper_prefill_head(kD, kDv), "tiles.hpp's rule covers every pair");
  template <typename T, bool kFp8>
  static bool launch(const FlashParams& p, int grid_m, cudaStream_t stream) {
    if constexpr (mm_prefix_built(kD, kDv)) {
      if (p.mm_offsets)
        return HopperKernel<kD, kDv, T, kFp8, true>::launch(p, grid_m, stream), true;
    }
    if (p.mm_offsets) return false;
    HopperKernel<kD, kDv, T, kFp8>::launch(p, grid_m, stream);
    return true;
  }
  template <typename T>
  static void prepare() {
    HopperKernel<kD, kDv, T, false>::prepare();
    HopperKernel<kD, kDv, T, true>::prepare();
    if constexpr (mm_prefix_built(kD, kDv)) {
      HopperKernel<kD, kDv, T, false, true>::prepare();
      HopperKernel<kD, kDv, T, true, true>::prepare();
    }
  }
};
template <typename... H>
struct HopperHeads {
  // Every built pair the rule admits has its kernels here (the v3 declaration is those pairs).
  static constexpr bool covers_manifest() {
    for (auto [qk, v] : kFlashHeadPairs)
      if (hopper_prefill_head(qk, v) && ((qk != H::kQk || v != H::kV) && ...)) return false;
    return true;
  }
  static_assert(covers_manifest(),
                "a head pair of the manifest that the rule admits has no kernel");
  template <typename T, bool kFp8>
  static bool launch(int qk, int v, const FlashParams& p, int grid_m, cudaStream_t stream) {
    return ((qk == H::kQk && v == H::kV && H::template launch<T, kFp8>(p, grid_m, stream)) || ...);
  }
  template <typename T>
  static void prepare() {
    (H::template prepare<T>(), ...);
  }
  static std::string names() {  // "64, 80, ..., 192/128"
    std::string out;
    ((out += (out.empty() ? "" : ", ") + std::to_string(H::kQk) +
             (H::kQk == H::kV ? "" : "/" + std::to_string(H::kV))),
     ...);
    return out;
  }
};
using Heads = HopperHeads<HopperHead<64, 64>, HopperHead<80, 80>, HopperHead<96, 96>,
                          HopperHead<128, 128>, HopperHead<160, 160>, HopperHead<192, 192>,
                          HopperHead<192, 128>, HopperHead<224, 224>, HopperHead<256, 256>>;

}  // namespace

void launch_flash_hopper(const FlashInstance& inst, const FlashParams& p, int grid_m,
                         cudaStream_t stream) {
  const bool fp8 = inst.kv == KvKind::kFp8;
  const bool bf16 = inst.dtype == DType::kBFloat16;
  const int qk = inst.head_qk, v = inst.head_v;
  const bool launched = fp8 ? (bf16 ? Heads::launch<__nv_bfloat16, true>(qk, v, p, grid_m, stream)
                                    : Heads::launch<__half, true>(qk, v, p, grid_m, stream))
                            : (bf16 ? Heads::launch<__nv_bfloat16, false>(qk, v, p, grid_m, stream)
                                    : Heads::launch<__half, false>(qk, v, p, grid_m, stream));
  if (!launched) {
    std::string mm;
    for (int h : kMmPrefixHeads) mm += (mm.empty() ? "" : ", ") + std::to_string(h);
    throw Unsupported("CUDA_FLASH v3: the Hopper prefill form runs heads " + Heads::names() +
                      ", with PrefixLM ranges at " + mm + " (got head " + std::to_string(qk) + "/" +
                      std::to_string(v) + (p.mm_offsets ? ", with ranges)" : ")"));
  }
}

void prepare_flash_hopper() {
  Heads::prepare<__nv_bfloat16>();
  Heads::prepare<__half>();
}

}  // namespace attnkit::cuda_flash
