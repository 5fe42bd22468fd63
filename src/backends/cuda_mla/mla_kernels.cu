// The one dispatch point of CUDA_MLA's kernels: flash_wide_kernel with V inside the K rows, one
// instance per manifest entry. The split-KV partials are merged by CUDA_FLASH's combine kernel.
#include <string>
#include <utility>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/flash_launch.cuh"
#include "backends/cuda_mla/mla_launch.hpp"

namespace attnkit::cuda_mla {
namespace {

using namespace cuda_flash;

template <size_t I>
struct MlaKernel {
  static constexpr FlashInstance kInst = kMlaManifest[I];
  static constexpr bool kFp8 = kInst.kv == KvKind::kFp8;
  static constexpr int kSmem = flash_smem_bytes(kInst.head_qk, kInst.head_v, kFp8, false, true);
  using T = typename CudaElem<kInst.dtype>::type;
  static constexpr auto kKernel = flash_wide_kernel<kInst.head_qk, kInst.head_v, T, kFp8, true>;
  static void launch(const FlashParams& p, int grid_m, cudaStream_t stream) {
    kKernel<<<dim3(grid_m, p.num_kv_heads, p.num_seqs * p.num_splits), kThreads, kSmem, stream>>>(
        p);
  }
  static void prepare() {
    cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    cudaFuncSetAttribute(kKernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  }
};

struct MlaEntry {
  void (*launch)(const FlashParams&, int, cudaStream_t);
  void (*prepare)();
};
template <size_t... Is>
constexpr std::array<MlaEntry, sizeof...(Is)> make_table(std::index_sequence<Is...>) {
  return {{{&MlaKernel<Is>::launch, &MlaKernel<Is>::prepare}...}};
}
constexpr auto kTable = make_table(std::make_index_sequence<kMlaManifest.size()>{});

}  // namespace

void prepare_mla_kernels() {
  for (const MlaEntry& e : kTable) e.prepare();
}

// The wide form has one form for every batch: split_keys is never set for it.
void launch_mla(int instance, const FlashParams& p, int grid_m, bool, void* stream) {
  if (instance < 0 || size_t(instance) >= kTable.size())
    throw Unsupported("CUDA_MLA: kernel instance " + std::to_string(instance) +
                      " is not in the manifest (size " + std::to_string(kTable.size()) + ")");
  kTable[size_t(instance)].launch(p, grid_m, static_cast<cudaStream_t>(stream));
}

bool mla_has_split_keys(int) { return false; }

}  // namespace attnkit::cuda_mla
