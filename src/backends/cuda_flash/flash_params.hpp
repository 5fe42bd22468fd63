// Launch parameters of the v2 kernels: plain data shared by the host launcher and the kernels.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ATTNKIT_HD __host__ __device__
#else
#define ATTNKIT_HD
#endif

namespace attnkit::cuda_flash {

// Division by a run-time constant as a multiply-high and two shifts (Granlund and Montgomery,
// exact for every 32-bit unsigned dividend): packed rows map to (token, head) by the GQA group size
// and key positions to (block, offset) by the block size this way all over the kernels, where an
// integer division costs ~20 instructions (v2h: 4% of a 1k prefill's stall samples were the Q
// tile's divisions).
struct FastDiv {
  uint32_t d = 1, m = 1;
  int s1 = 0, s2 = 0;
  ATTNKIT_HD int div(int n) const {  // n >= 0
    const uint32_t u = uint32_t(n);
    const uint32_t t = uint32_t((uint64_t(m) * u) >> 32);
    return int((t + ((u - t) >> s1)) >> s2);
  }
  ATTNKIT_HD int mod(int n, int q) const { return n - q * int(d); }  // q = div(n)
  ATTNKIT_HD int rem(int n) const { return mod(n, div(n)); }         // n >= 0
};
inline FastDiv make_fast_div(uint32_t d) {
  int l = 0;
  while ((uint64_t(1) << l) < d) ++l;  // ceil(log2 d)
  FastDiv g;
  g.d = d;
  g.m = uint32_t((uint64_t(1) << 32) * ((uint64_t(1) << l) - d) / d + 1);
  g.s1 = l < 1 ? l : 1;
  g.s2 = l > 1 ? l - 1 : 0;
  return g;
}

struct FlashParams {
  const void* q = nullptr;
  int64_t q_stride_token = 0, q_stride_head = 0;  // elements
  void* out = nullptr;
  int64_t o_stride_token = 0, o_stride_head = 0;  // elements
  int out_vec16 = 0;  // out rows 16-byte aligned (base, strides): the prefill form's 16-byte stores
  float* lse = nullptr;  // [total_q, num_heads] or nullptr
  const char* k = nullptr;
  const char* v = nullptr;
  int64_t k_stride_block = 0, k_stride_head = 0, k_stride_token = 0;  // bytes
  int64_t v_stride_block = 0, v_stride_head = 0, v_stride_token = 0;  // bytes
  const float* k_scale = nullptr;                                     // nullptr = 1
  const float* v_scale = nullptr;
  int scale_per_head = 0;
  int kv_e5m2 = 0;  // fp8 kind: e5m2 instead of e4m3
  const int32_t* cu_seqlens_q = nullptr;
  const int32_t* seqused_k = nullptr;
  const int32_t* block_table = nullptr;
  int block_table_stride = 0;
  int block_size = 0;
  FastDiv bdiv;  // division by block_size
  int num_seqs = 0, num_heads = 0, num_kv_heads = 0, group = 1;
  FastDiv gdiv;            // division by `group`
  float scale = 0.f;       // softmax scale (natural)
  float scale_log2 = 0.f;  // scale * log2(e), the no-transform fast path
  float softcap = 0.f;     // 0 = off
  const float* alibi = nullptr;
  const float* sinks = nullptr;
  int window_left = 0, window_right = 0;  // already resolved: "unbounded" is a large value
  int num_splits = 1;        // every sequence's split count, or a ragged plan's largest one
  int total_q_capacity = 0;  // row stride of the split workspace
  float* ws_o = nullptr;     // [num_splits, total_q_capacity, num_heads, head_v]
  float* ws_lse = nullptr;   // [num_splits, total_q_capacity, num_heads]
  int head_v = 0;            // for the combine kernel
  int form = 0;              // a family's kernel form, as its plan chose it (FlashGeometry)
  // Ragged decode plans (tiles.hpp, ragged_splits; last, so the other fields keep their offsets):
  int split_chunk = 0;       // keys per split; 0: a uniform plan (num_splits for every sequence)
  int grid_items = 0;        // the grid's z extent (sequence x split items)
  int* ws_nsplit = nullptr;  // [total_q_capacity]: each token's split count, for the combine
  // PrefixLM ranges (AttentionBatch::mm_prefix_*), given only when the plan found that they widen
  // some row; a prefill form's kMm instantiation then runs. nullptr: plain masks.
  const int32_t* mm_offsets = nullptr;
  const int32_t* mm_ranges = nullptr;
  // SM90: the decode form is launched as a programmatic dependent of the stream's previous kernel
  // (pdl.cuh).
  int pdl = 0;
  // Chunked local attention in the decode form's kChunk instantiation (manifest.hpp
  // chunk_decode_built): the chunk size (0: none) and the division by it. Last, so that the
  // fields above keep their offsets in every other kernel.
  int chunk = 0;
  FastDiv cdiv;
  // The decode form's launch asks for kDecodeMinSmem (tiles.hpp decode_floor).
  int smem_floor = 0;
  // The decode form may copy the rows below each sequence's own before its wait (p.pdl and
  // AttentionBatch::earlier_rows_settled). Last, as `chunk` above.
  int early_kv = 0;
};

inline constexpr int kUnboundedWindow = 1 << 29;

}  // namespace attnkit::cuda_flash
