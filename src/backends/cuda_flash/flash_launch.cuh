// Turns manifest entries into launchable kernels. Included by the flash_part*.cu files, each of
// which instantiates every kFlashParts-th entry (parallel compilation, same single list).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/flash_fwd.cuh"
#include "backends/cuda_flash/flash_wide.cuh"
#include "backends/cuda_flash/manifest.hpp"

namespace attnkit::cuda_flash {

inline constexpr int kFlashParts = 4;

struct FlashKernelEntry {
  void (*launch)(const FlashParams&, int grid_m, bool split_keys, cudaStream_t) = nullptr;
  void (*prepare)() = nullptr;
  bool has_split_keys = false;
  bool has_mm = false;     // the prefill form is also built for PrefixLM ranges (kMm)
  bool has_chunk = false;  // the decode form is also built for chunked local attention (kChunk)
};

// Launches k(p) over `grid`; with `dependent` as a programmatic dependent of the stream's
// previous kernel (pdl.cuh: the kernel waits for it with pdl_wait_primary()).
template <typename Kernel>
void launch_kernel(Kernel* k, dim3 grid, int threads, int smem, cudaStream_t stream,
                   const FlashParams& p, bool dependent, const char* what) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(unsigned(threads));
  cfg.dynamicSmemBytes = size_t(smem);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = dependent ? 1 : 0;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, k, p);
  if (e != cudaSuccess)
    throw Error(std::string("CUDA kernel launch failed (") + what + "): " + cudaGetErrorString(e));
}

template <DType D>
struct CudaElem;
template <>
struct CudaElem<DType::kBFloat16> {
  using type = __nv_bfloat16;
};
template <>
struct CudaElem<DType::kFloat16> {
  using type = __half;
};

template <size_t I>
struct FlashInstanceKernel {
  static constexpr FlashInstance kInst = kFlashManifest[I];
  static constexpr bool kFp8 = kInst.kv == KvKind::kFp8;
  static constexpr bool kSplitForm = has_decode_form(kInst.head_qk, kInst.head_v, kFp8);
  static constexpr bool kWide = is_wide(kInst.head_qk, kInst.head_v);  // flash_wide_kernel
  static constexpr bool kMmBuilt = !kWide && mm_prefix_built(kInst.head_qk, kInst.head_v);
  static constexpr bool kChunkBuilt =
      kSplitForm && !kWide && chunk_decode_built(kInst.head_qk, kInst.head_v);
  using T = typename CudaElem<kInst.dtype>::type;
  // The kernel of a form; the fp8 decode form is built once per fp8 format (see kFp8Format).
  // kRagged: the decode form's instantiation for ragged plans (split counts per sequence); kMm:
  // the prefill form's for PrefixLM ranges; kChunk: the decode form's for chunked local layers.
  template <bool kSplit, int kFmt, bool kRagged = false, bool kMm = false, bool kChunk = false>
  static auto kernel() {
    if constexpr (kWide)
      return flash_wide_kernel<kInst.head_qk, kInst.head_v, T, kFp8>;
    else
      return flash_fwd_kernel<kInst.head_qk, kInst.head_v, T, kFp8, kSplit, kFmt, kRagged, kMm,
                              kChunk>;
  }
  template <bool kSplit>
  static constexpr bool kPerFormat = !kWide && (kFp8 && kSplit);
  template <bool kSplit>
  static constexpr bool kFloorable = !kWide && kSplit;  // the decode form
  template <bool kSplit, bool kRagged = false, bool kMm = false, bool kChunk = false>
  static void launch_form(const FlashParams& p, int grid_m, cudaStream_t stream) {
    constexpr int kSmem = flash_smem_bytes(kInst.head_qk, kInst.head_v, kFp8, kSplit);
    // The decode form asks for the shared-memory floor when run() says so (tiles.hpp).
    const int smem = kFloorable<kSplit> && p.smem_floor ? std::max(kSmem, kDecodeMinSmem) : kSmem;
    const dim3 grid(grid_m, p.num_kv_heads, kRagged ? p.grid_items : p.num_seqs * p.num_splits);
    // The decode form goes out as a programmatic dependent of the stream's previous kernel on
    // SM90 (p.pdl), so that its launch and metadata reads overlap that kernel's tail.
    auto go = [&](auto* k) {
      launch_kernel(k, grid, kThreads, smem, stream, p, kSplit && p.pdl, "decode");
    };
    if constexpr (kPerFormat<kSplit>) {
      if (p.kv_e5m2)
        go(kernel<kSplit, 2, kRagged, false, kChunk>());
      else
        go(kernel<kSplit, 1, kRagged, false, kChunk>());
    } else {
      go(kernel<kSplit, 0, kRagged, kMm, kChunk>());
    }
  }
  // PrefixLM ranges (p.mm_offsets) take the prefill form's kMm kernel; launch_flash checks that
  // the entry has one and that the plan did not pick the decode form.
  static void launch(const FlashParams& p, int grid_m, bool split_keys, cudaStream_t stream) {
    if constexpr (kMmBuilt) {
      if (p.mm_offsets) return launch_form<false, false, true>(p, grid_m, stream);
    }
    // A chunk (p.chunk) takes the decode form's kChunk kernel; launch_flash checks that the entry
    // has one and that the plan picked the decode form.
    if constexpr (kChunkBuilt) {
      if (p.chunk)
        return p.split_chunk ? launch_form<true, true, false, true>(p, grid_m, stream)
                             : launch_form<true, false, false, true>(p, grid_m, stream);
    }
    if constexpr (kSplitForm) {
      if (split_keys)
        return p.split_chunk ? launch_form<true, true>(p, grid_m, stream)
                             : launch_form<true>(p, grid_m, stream);
    }
    launch_form<false>(p, grid_m, stream);
  }
  template <bool kSplit, int kFmt, bool kRagged = false, bool kMm = false, bool kChunk = false>
  static void prepare_kernel() {
    auto* k = kernel<kSplit, kFmt, kRagged, kMm, kChunk>();
    const int smem = flash_smem_bytes(kInst.head_qk, kInst.head_v, kFp8, kSplit);
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         kFloorable<kSplit> ? std::max(smem, kDecodeMinSmem) : smem);
    // All of L1 as shared memory, so several CTAs fit per SM.
    cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  }
  template <bool kSplit, bool kRagged = false, bool kChunk = false>
  static void prepare_form() {
    if constexpr (kPerFormat<kSplit>) {
      prepare_kernel<kSplit, 1, kRagged, false, kChunk>();
      prepare_kernel<kSplit, 2, kRagged, false, kChunk>();
    } else {
      prepare_kernel<kSplit, 0, kRagged, false, kChunk>();
    }
  }
  static void prepare() {
    prepare_form<false>();
    if constexpr (kMmBuilt) prepare_kernel<false, 0, false, true>();
    if constexpr (kSplitForm) {
      prepare_form<true>();
      prepare_form<true, true>();
    }
    if constexpr (kChunkBuilt) {
      prepare_form<true, false, true>();
      prepare_form<true, true, true>();
    }
  }
};

template <int N, size_t I>
void fill_flash_entry(FlashKernelEntry* table) {
  if constexpr (I % kFlashParts == N)
    table[I] = {&FlashInstanceKernel<I>::launch, &FlashInstanceKernel<I>::prepare,
                FlashInstanceKernel<I>::kSplitForm, FlashInstanceKernel<I>::kMmBuilt,
                FlashInstanceKernel<I>::kChunkBuilt};
}
template <int N, size_t... Is>
void fill_flash_part(FlashKernelEntry* table, std::index_sequence<Is...>) {
  (fill_flash_entry<N, Is>(table), ...);
}

// v3's Hopper prefill form (flash_hopper.cu, sm_90a): tiles.hpp hopper_prefill_head's heads.
void launch_flash_hopper(const FlashInstance& inst, const FlashParams& p, int grid_m,
                         cudaStream_t stream);
void prepare_flash_hopper();

void fill_flash_part0(FlashKernelEntry* table);
void fill_flash_part1(FlashKernelEntry* table);
void fill_flash_part2(FlashKernelEntry* table);
void fill_flash_part3(FlashKernelEntry* table);

}  // namespace attnkit::cuda_flash
