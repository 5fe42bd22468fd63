// The one dispatch point of CUDA_MLA's kernels, two forms per manifest entry: flash_wide_kernel
// with V inside the K rows (mma.sync, SM80+; every feature) and mla_hopper_kernel (wgmma,
// sm_90a; 64-row CTAs; plain logits; also built for ragged plans), as the plan picked
// (mla_tiles.hpp). The split-KV partials of either are merged by CUDA_FLASH's combine kernel.
#include <string>
#include <utility>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/flash_launch.cuh"
#include "backends/cuda_mla/mla_hopper.cuh"
#include "backends/cuda_mla/mla_launch.hpp"

namespace attnkit::cuda_mla {
namespace {

using namespace cuda_flash;

template <size_t I>
struct MlaKernel {
  static constexpr FlashInstance kInst = kMlaManifest[I];
  static constexpr bool kFp8 = kInst.kv == KvKind::kFp8;
  static constexpr int kSmem = flash_smem_bytes(kInst.head_qk, kInst.head_v, kFp8, false, true);
  static constexpr int kHopperSmem = hopper_smem_bytes(kFp8);
  using T = typename CudaElem<kInst.dtype>::type;
  static_assert(kInst.head_qk == kLatent && kInst.head_v == kLatentV, "the latent's dims");
  static constexpr auto kWide = flash_wide_kernel<kInst.head_qk, kInst.head_v, T, kFp8, true>;
  static constexpr auto kHopper = mla_hopper_kernel<T, kFp8>;
  static constexpr auto kHopperRagged = mla_hopper_kernel<T, kFp8, true>;  // ragged plans
  static void launch(const FlashParams& p, int grid_m, cudaStream_t stream) {
    const dim3 grid(grid_m, p.num_kv_heads,
                    p.split_chunk ? p.grid_items : p.num_seqs * p.num_splits);
    // The Hopper form as a programmatic dependent of the stream's previous kernel (p.pdl, SM90),
    // as CUDA_FLASH's decode form.
    if (p.form == kHopperForm)
      launch_kernel(p.split_chunk ? kHopperRagged : kHopper, grid, kHopperThreads, kHopperSmem,
                    stream, p, p.pdl != 0, "MLA decode");
    else
      kWide<<<grid, kThreads, kSmem, stream>>>(p);
  }
  static void prepare(int cc) {
    cudaFuncSetAttribute(kWide, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    cudaFuncSetAttribute(kWide, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    if (cc == 90) {
      cudaFuncSetAttribute(kHopper, cudaFuncAttributeMaxDynamicSharedMemorySize, kHopperSmem);
      cudaFuncSetAttribute(kHopperRagged, cudaFuncAttributeMaxDynamicSharedMemorySize, kHopperSmem);
    }
  }
};

struct MlaEntry {
  void (*launch)(const FlashParams&, int, cudaStream_t);
  void (*prepare)(int);
};
template <size_t... Is>
constexpr std::array<MlaEntry, sizeof...(Is)> make_table(std::index_sequence<Is...>) {
  return {{{&MlaKernel<Is>::launch, &MlaKernel<Is>::prepare}...}};
}
constexpr auto kTable = make_table(std::make_index_sequence<kMlaManifest.size()>{});

}  // namespace

void prepare_mla_kernels(int cc) {
  for (const MlaEntry& e : kTable) e.prepare(cc);
}

// p.form is the plan's choice (cuda_mla_backend.cpp); grid_m counts its row blocks. Neither form
// has a separate decode form: split_keys is never set.
void launch_mla(int instance, const FlashParams& p, int grid_m, bool, void* stream) {
  if (instance < 0 || size_t(instance) >= kTable.size())
    throw Unsupported("CUDA_MLA: kernel instance " + std::to_string(instance) +
                      " is not in the manifest (size " + std::to_string(kTable.size()) + ")");
  if (p.form != kWideForm && p.form != kHopperForm)
    throw Unsupported("CUDA_MLA: kernel form " + std::to_string(p.form) + " is not built");
  kTable[size_t(instance)].launch(p, grid_m, static_cast<cudaStream_t>(stream));
}

bool mla_has_split_keys(int) { return false; }

}  // namespace attnkit::cuda_mla
