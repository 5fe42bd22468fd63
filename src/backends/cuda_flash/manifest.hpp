// The instantiation manifest of the CUDA_FLASH v2 kernels: the one list both the kernels and the
// capability declaration are made from. Compiled in CPU-only builds too (plain constexpr data), so
// planning for a GPU the build machine lacks states exactly what a CUDA build contains.
// Trimming an entry here removes its kernels and its declared support in one edit.
#pragma once

#include <array>
#include <cstddef>

#include "attnkit/types.hpp"

namespace attnkit::cuda_flash {

// How the kernel reads K/V: 16-bit storage of the activation dtype, or fp8 bytes (e4m3 and e5m2
// share one instantiation: the format is a run-time flag of the dequantizing copy).
enum class KvKind { k16Bit, kFp8 };

struct FlashInstance {
  int head_qk;
  int head_v;
  DType dtype;  // q, out and the 16-bit KV storage
  KvKind kv;
  bool operator==(const FlashInstance&) const = default;
};

// Head sizes (qk, v) with a kernel. Every pair is built for both dtypes and both KV kinds. 160
// and 224 are Zamba2's (2 x hidden_size / heads: 2.7B and 7B), which FlashAttention also builds.
inline constexpr std::array<std::pair<int, int>, 10> kFlashHeadPairs = {{{64, 64},
                                                                         {80, 80},
                                                                         {96, 96},
                                                                         {128, 128},
                                                                         {160, 160},
                                                                         {192, 192},
                                                                         {224, 224},
                                                                         {256, 256},
                                                                         {192, 128},
                                                                         {512, 512}}};
inline constexpr std::array<DType, 2> kFlashDTypes = {DType::kFloat16, DType::kBFloat16};
inline constexpr std::array<KvKind, 2> kFlashKvKinds = {KvKind::k16Bit, KvKind::kFp8};

inline constexpr size_t kFlashManifestSize =
    kFlashHeadPairs.size() * kFlashDTypes.size() * kFlashKvKinds.size();

inline constexpr std::array<FlashInstance, kFlashManifestSize> kFlashManifest = [] {
  std::array<FlashInstance, kFlashManifestSize> out{};
  size_t i = 0;
  for (auto [qk, v] : kFlashHeadPairs)
    for (DType d : kFlashDTypes)
      for (KvKind kv : kFlashKvKinds) out[i++] = {qk, v, d, kv};
  return out;
}();

// Heads whose prefill forms (v2's, and v3's Hopper form where it runs) are also built for PrefixLM
// ranges (the kernels' kMm instantiations): those of the PrefixLM models (PaliGemma and Gemma 3
// at 256; their 27B/28B sizes at 128), for both dtypes and both KV kinds. Layers with mm_prefix
// at other heads are refused (capabilities.cpp).
inline constexpr std::array<int, 2> kMmPrefixHeads = {128, 256};
constexpr bool mm_prefix_built(int head_qk, int head_v) {
  for (int h : kMmPrefixHeads)
    if (head_qk == h && head_v == h) return true;
  return false;
}

// Heads whose decode form is also built for chunked local attention (the kernels' kChunk
// instantiations, both dtypes and KV kinds): Llama 4's. A decode batch of a chunked layer at these
// heads runs them with the original batch; other chunked batches run as chunk pieces (tiles.hpp
// chunk_piece).
inline constexpr std::array<int, 1> kChunkDecodeHeads = {128};
constexpr bool chunk_decode_built(int head_qk, int head_v) {
  for (int h : kChunkDecodeHeads)
    if (head_qk == h && head_v == h) return true;
  return false;
}

// Index of the instance that runs (head_qk, head_v, dtype, kv), or -1 when none is built.
constexpr int find_flash_instance(int head_qk, int head_v, DType dtype, KvKind kv) {
  for (size_t i = 0; i < kFlashManifest.size(); ++i) {
    const FlashInstance& f = kFlashManifest[i];
    if (f.head_qk == head_qk && f.head_v == head_v && f.dtype == dtype && f.kv == kv) return int(i);
  }
  return -1;
}

// The KV kind a cache dtype needs with a given activation dtype, or false when no kernel reads
// that combination (a 16-bit cache must match the activation dtype: the kernel feeds it straight
// to the tensor cores).
constexpr bool kv_kind_for(KvCacheDType kv, DType dtype, KvKind* out) {
  switch (kv) {
    case KvCacheDType::kAuto:
      *out = KvKind::k16Bit;
      return dtype != DType::kFloat32;
    case KvCacheDType::kFloat16:
      *out = KvKind::k16Bit;
      return dtype == DType::kFloat16;
    case KvCacheDType::kBFloat16:
      *out = KvKind::k16Bit;
      return dtype == DType::kBFloat16;
    case KvCacheDType::kFp8E4M3:
    case KvCacheDType::kFp8E5M2:
      *out = KvKind::kFp8;
      return true;
    default:
      return false;
  }
}

}  // namespace attnkit::cuda_flash
