// The execution contract shared by every executable backend (CPU_REFERENCE, CPU_FLASH,
// CUDA_FLASH, CUDA_MLA): plain pointers, shapes and strides. Pointers live in the backend's
// memory space (host for CPU backends, device for CUDA ones), except where marked host.
// docs/semantics.md defines what each field means exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "attnkit/capability.hpp"
#include "attnkit/device.hpp"
#include "attnkit/types.hpp"

namespace attnkit {

// One layer's paged KV cache. Canonical layout (HND): K and V each
//   [num_blocks, num_kv_heads, block_size, head_size] of the storage type,
// addressed through byte strides so other layouts can be described too.
// fp8: one byte per element. nvfp4: two e2m1 values per byte (low nibble = even element); its
//   e4m3 block scales, one per 16 elements, sit at
//   k_block_scales + block*sb_block + head*sb_head + token*sb_token + group, and V's at
//   v_block_scales through v_sb_* (a V row of head_size_v elements has head_size_v / 16 of them,
//   a K row head_size / 16); the per-tensor k_scale/v_scale multiplies on top.
// MLA: K holds the latent rows [num_blocks, 1, block_size, kv_lora_rank + rope]; v == nullptr
//   means V is the first head_size_v elements of each K row.
struct KvCacheView {
  void* k = nullptr;
  void* v = nullptr;
  KvCacheDType dtype = KvCacheDType::kBFloat16;  // resolved: never kAuto
  int num_blocks = 0;
  int block_size = 0;
  int num_kv_heads = 0;
  int head_size = 0;
  int head_size_v = 0;
  int64_t stride_block = 0;                                           // bytes
  int64_t stride_head = 0;                                            // bytes
  int64_t stride_token = 0;                                           // bytes
  int64_t v_stride_block = 0, v_stride_head = 0, v_stride_token = 0;  // bytes
  // Quantized caches: dequantized = stored * scale. Per tensor: 1 float each; per head:
  // num_kv_heads floats each. nullptr means 1.0.
  ScaleGranularity scale_granularity = ScaleGranularity::kNone;
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
  // nvfp4 block scales (e4m3) and their byte strides, K's and V's.
  uint8_t* k_block_scales = nullptr;
  uint8_t* v_block_scales = nullptr;
  int64_t sb_block = 0, sb_head = 0, sb_token = 0;
  int64_t v_sb_block = 0, v_sb_head = 0, v_sb_token = 0;
};

// Per-step batch metadata (varlen). Query tokens of sequence i are rows
// [cu_seqlens_q[i], cu_seqlens_q[i+1]) of q/out; its keys are the first seqused_k[i] tokens of
// its paged sequence, read through block_table row i.
struct AttentionBatch {
  int num_seqs = 0;
  int total_q = 0;
  int max_seqlen_q = 0;
  int max_seqlen_k = 0;
  const int32_t* cu_seqlens_q = nullptr;  // [num_seqs + 1]
  const int32_t* seqused_k = nullptr;     // [num_seqs]
  const int32_t* block_table = nullptr;   // [num_seqs, block_table_stride]
  int block_table_stride = 0;
  // PrefixLM (mm_prefix layers, docs/semantics.md §4): key ranges whose tokens (multimodal
  // placeholders) see each other bidirectionally. Sequence i's ranges are entries
  // [mm_prefix_offsets[i], mm_prefix_offsets[i + 1]) of mm_prefix_ranges, each a {start, end}
  // pair of key positions (half-open), sorted, disjoint and within [0, seqused_k[i]).
  // nullptr: no ranges (plain masks).
  const int32_t* mm_prefix_offsets = nullptr;  // [num_seqs + 1]
  const int32_t* mm_prefix_ranges = nullptr;   // [2 * mm_prefix_offsets[num_seqs]]
  // Set when the stream's kernel just before run() writes no cache row that sequence i held
  // before this step (its keys below seqused_k[i] - its query count): a serving step, whose KV
  // write writes only its own tokens' rows. A CUDA backend may then read those rows before that
  // kernel has finished (docs/semantics.md §7). Unset: they are read only after it.
  bool earlier_rows_settled = false;
};

// Static per-layer parameters.
struct AttentionLayerParams {
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_size = 0;
  int head_size_v = 0;
  DType dtype = DType::kBFloat16;  // q and out
  float scale = 0.f;               // softmax scale (usually 1/sqrt(head_size))
  bool causal = true;              // bottom-right aligned
  int window_left = -1;            // -1 = unbounded; sliding window w gives w - 1
  int window_right = -1;           // -1 = unbounded (causal implies 0)
  // Chunked local attention (Llama 4): 0 = off; C > 0 lets a query at key position p see only
  // the keys of its own chunk [C floor(p / C), C floor(p / C) + C), on top of the rules above.
  int attention_chunk_size = 0;
  float logits_soft_cap = 0.f;          // 0 = off; else cap * tanh(s / cap)
  const float* alibi_slopes = nullptr;  // [num_heads] or nullptr
  const float* sinks = nullptr;         // [num_heads] sink logits or nullptr
};

// First key position of the chunk that holds key position p (floor division: a p < 0 row's
// chunk holds no key), for chunked local attention of chunk size c > 0 (docs/semantics.md §4).
constexpr int64_t chunk_first_key(int64_t p, int c) {
  return p >= 0 ? p - p % c : -((-p + c - 1) / c) * c;
}

struct AttentionArgs {
  const void* q = nullptr;                            // [total_q, num_heads, head_size]
  int64_t q_stride_token = 0, q_stride_head = 0;      // elements
  void* out = nullptr;                                // [total_q, num_heads, head_size_v]
  int64_t out_stride_token = 0, out_stride_head = 0;  // elements
  float* lse = nullptr;  // optional [total_q, num_heads], natural log; -inf for empty rows
  KvCacheView kv;
  AttentionBatch batch;
  AttentionLayerParams layer;
  void* workspace = nullptr;  // at least workspace_bytes() of the last plan
};

// Write new K/V rows into the cache through the slot mapping (slot = block * block_size +
// offset; -1 = skip), converting to the cache dtype: fp8 saturates, scales divide.
struct KvWriteArgs {
  const void* k = nullptr;  // [num_tokens, num_kv_heads, head_size] of `dtype`
  const void* v = nullptr;  // [num_tokens, num_kv_heads, head_size_v]; nullptr for MLA latent
  DType dtype = DType::kBFloat16;
  int num_tokens = 0;
  int64_t k_stride_token = 0, k_stride_head = 0;  // elements
  int64_t v_stride_token = 0, v_stride_head = 0;  // elements
  const int64_t* slot_mapping = nullptr;          // [num_tokens]
  KvCacheView cache;
};

class AttentionBackend {
 public:
  virtual ~AttentionBackend() = default;
  virtual std::string_view name() const = 0;
  virtual const Capabilities& capabilities() const = 0;
  // Host-side plan for one step: `host_batch` points at host copies of the metadata. Computes
  // the work partition, split counts and the workspace size. Called once per step per layer
  // signature, before run().
  virtual void plan(const AttentionBatch& host_batch, const AttentionLayerParams& layer) = 0;
  virtual size_t workspace_bytes() const { return 0; }
  // Runs one layer for the planned step: no allocation, no host sync. `stream` is a
  // cudaStream_t for CUDA backends and ignored on the CPU; what a CUDA backend may read before
  // the stream's previous kernel has finished: docs/semantics.md §7.
  virtual void run(const AttentionArgs& args, void* stream = nullptr) = 0;
  virtual void write_kv(const KvWriteArgs& args, void* stream = nullptr) = 0;
};

}  // namespace attnkit
