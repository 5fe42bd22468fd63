// CPU_FLASH internals shared by every ISA variant: work items, scratch layout, row geometry
// (masks), the cache addressing and the scalar epilogue (normalize, sinks, LSE, split merge).
//
// The variants' files include this header, and with it every standard header their code uses,
// before their `#pragma GCC target`, so that it compiles for baseline x86-64 there too. An inline
// function that is not inlined everywhere is emitted in each file that calls it, and the linker
// keeps one copy for all callers: built with the file's AVX-512 flags, CacheRows::rows_from's copy
// ran in the AVX2 variant and the baseline code, and killed every process on CPUs without AVX-512
// (session 71). tests/isa_units_check.sh checks the objects for that.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

#include "attnkit/attention.hpp"
#include "attnkit/numeric.hpp"
#include "backends/cpu_flash/cpu_flash_backend.hpp"

namespace attnkit::cpu_flash {

// Tile sizes, shared by the planner (scratch, split granularity) and the kernels.
constexpr int kKeyTile = 64;  // keys per inner tile
constexpr int kSplitMinKeys = 512;
// Lockstep items (WorkItem::heads): KV heads of at most kLockstepHeadRows query rows each, up to
// kLockstepRows rows an item (the few-rows form's Q and O for all of them stay in L1).
constexpr int kLockstepHeadRows = 8, kLockstepRows = 32;

// Query rows (token x query head of one KV head) per work item. The fp32-FMA path takes 128: each
// tile's K transposes and fixed costs then serve twice the rows (bench prefill, three alternating
// rounds against 64: fp32 +10% on the mean, fp16 +11%; results/cpu_2026-11-30_s11_rows_ab.jsonl).
// bf16 models whose larger items run on bf16 products (AMX tiles, or vdpbf16ps where it pays): 64.
// Elsewhere a bf16 model's items take the fp32 path too, and 128 rows: on a 2-vCPU VM without fast
// bf16 products, bf16 prefill 2-11% faster than at 64, measured by re-planning and running
// alternately in one process (results/cpu_2026-12-01_s23_rows_interleaved.txt; 192 or 256 rows
// against 128: 0.98-1.08x, not taken).
inline int rows_target(DType model, bool bf16_products) {
  return model == DType::kBFloat16 && bf16_products ? 64 : 128;
}

// Zeros that stand in for a tile's rows past the sequence where the kernels read rows in place
// (any row of at most kZeroRowBytes; cache slots past seqused_k are never read).
inline constexpr int kZeroRowBytes = 4096;
alignas(64) inline constexpr unsigned char kZeroRow[kZeroRowBytes] = {};

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// One unit of parallel work: query tokens [t0, t1) of a sequence, all query heads of `heads`
// consecutive KV heads from kv_head (GQA: every K/V tile is loaded once for all query heads of
// its KV head), keys [k_begin, k_end). An item of several KV heads runs them in lockstep, tile
// by tile (decode-sized items: the few-rows form), so that it reads each cache block's heads
// one after the other: the runs of one block lie back to back (HND), where one head's runs lie
// a block apart.
struct WorkItem {
  int seq = 0;
  int kv_head = 0;
  int t0 = 0, t1 = 0;
  int k_begin = 0, k_end = 0;
  int64_t partial = -1;  // first partial row in the workspace (split-KV), or -1: write out
  int heads = 1;
};

// Query rows of one KV head of a work item: its tokens x that head's query heads.
inline int item_head_rows(const AttentionArgs& a, const WorkItem& w) {
  return (w.t1 - w.t0) * (a.layer.num_heads / a.layer.num_kv_heads);
}
// Query rows of a work item, KV head by KV head.
inline int item_rows(const AttentionArgs& a, const WorkItem& w) {
  return item_head_rows(a, w) * w.heads;
}
// Row r of a work item: its token (from the sequence's first query) and query head.
struct ItemRow {
  int t, h;
};
inline ItemRow item_row(const AttentionArgs& a, const WorkItem& w, int r) {
  const int g = a.layer.num_heads / a.layer.num_kv_heads, per_head = (w.t1 - w.t0) * g;
  const int kh = w.kv_head + r / per_head, i = r % per_head;
  return {w.t0 + i / g, kh * g + i % g};
}
// KV head `hh` of a work item as an item of its own (its partial rows where they lie in w's).
inline WorkItem item_head(const AttentionArgs& a, const WorkItem& w, int hh) {
  WorkItem one = w;
  one.kv_head = w.kv_head + hh;
  one.heads = 1;
  if (w.partial >= 0) one.partial = w.partial + int64_t(hh) * item_head_rows(a, w);
  return one;
}

// The widest SIMD vector of any variant, in floats (AVX-512).
inline constexpr int kMaxLanes = 16;

// Per-thread scratch, one float allocation carved into these regions (offsets in floats).
struct ScratchLayout {
  size_t q, stage, kt, vs, s, p, o, m, l, total;
  ScratchLayout(int max_rows, int head_size, int head_size_v) {
    const size_t rows = size_t(max_rows), dmax = size_t(std::max(head_size, head_size_v));
    size_t off = 0;
    auto take = [&](size_t n) {
      size_t at = off;
      off += (n + 15) / 16 * 16;  // keep 64-byte alignment
      return at;
    };
    q = take(rows * head_size);
    stage = take(2 * kKeyTile * dmax);
    kt = take(kKeyTile * dmax);
    vs = take(kKeyTile * dmax);
    s = take(rows * kKeyTile);
    p = take(rows * kKeyTile);
    o = take(rows * head_size_v);
    m = take(rows);
    l = take(rows * kMaxLanes);  // per row, one SIMD vector of the denominator's partial sums
    total = off;
  }
};

// One sequence's PrefixLM ranges ({start, end} pairs, validated; n = 0: none).
struct MmRanges {
  const int32_t* r = nullptr;
  int n = 0;
};
inline MmRanges mm_ranges(const AttentionBatch& B, int seq) {
  if (!B.mm_prefix_ranges) return {};
  const int32_t r0 = B.mm_prefix_offsets[seq];
  return {B.mm_prefix_ranges + 2 * r0, B.mm_prefix_offsets[seq + 1] - r0};
}

// Visible keys [lo, hi] of query token t (0-based in its sequence): bottom-right aligned, so
// its position among the keys is t + Sk - Sq. A query inside a PrefixLM range also sees the
// whole range (still one interval); chunked local attention then keeps the query's own chunk.
// Both bounds grow with t. hi < lo means no visible key.
struct RowRange {
  int lo, hi, pos;
};
inline RowRange row_range(const AttentionLayerParams& L, const MmRanges& mm, int t, int Sq,
                          int Sk) {
  const int pos = t + Sk - Sq;
  int lo = L.window_left >= 0 ? std::max(0, pos - L.window_left) : 0;
  int hi = L.causal ? pos : (L.window_right >= 0 ? pos + L.window_right : Sk - 1);
  hi = std::min(hi, Sk - 1);
  for (int i = 0; i < mm.n; ++i)
    if (pos >= mm.r[2 * i] && pos < mm.r[2 * i + 1])
      lo = std::min(lo, mm.r[2 * i]), hi = std::max(hi, mm.r[2 * i + 1] - 1);
  if (L.attention_chunk_size > 0) {
    const int c0 = int(chunk_first_key(pos, L.attention_chunk_size));
    lo = std::max(lo, c0), hi = std::min(hi, c0 + L.attention_chunk_size - 1);
  }
  return {lo, hi, pos};
}

// Dequantization scale of K or V for one KV head (per tensor, per head or none).
inline float kv_scale(const KvCacheView& kv, const float* s, int kv_head) {
  if (!s) return 1.f;
  return kv.scale_granularity == ScaleGranularity::kPerHead ? s[kv_head] : s[0];
}

// Rows of the paged cache: byte address of key `n` of sequence `seq`.
struct CacheRows {
  const uint8_t* base;
  int64_t s_block, s_head, s_token;
  const uint8_t* scales;  // nvfp4 block scales or nullptr
  int64_t sb_block, sb_head, sb_token;
  const int32_t* table;  // this sequence's block-table row
  int block_size, kv_head;
  // Block and slot of key n (n >= 0): a shift and a mask for the usual power-of-two block sizes
  // instead of a division (with the prefetch's block runs, one-thread decode in cache +5-15%,
  // results/cpu_2026-11-30_s10_incache_driver.txt).
  int block_of(int n) const {
    return (block_size & (block_size - 1)) == 0 ? n >> std::countr_zero(unsigned(block_size))
                                                : n / block_size;
  }
  int slot_of(int n) const {
    return (block_size & (block_size - 1)) == 0 ? n & (block_size - 1) : n % block_size;
  }
  const uint8_t* row(int n) const {
    const int64_t b = table[block_of(n)];
    return base + b * s_block + kv_head * s_head + int64_t(slot_of(n)) * s_token;
  }
  // out[i] = row(n0 + i) for i < count, one table read per block. The fields are read into
  // locals once: filled through row(), the stores to `out` made the compiler reload every field
  // per row (~35 instructions a key, 15% of the few-rows form's score time in L2).
  template <class E>
  void rows_from(int n0, int count, const E** out) const {
    const CacheRows r = *this;
    const uint8_t* head = r.base + int64_t(r.kv_head) * r.s_head;
    for (int i = 0; i < count;) {
      const int n = n0 + i, slot = r.slot_of(n), run = std::min(count - i, r.block_size - slot);
      const uint8_t* p = head + int64_t(r.table[r.block_of(n)]) * r.s_block + slot * r.s_token;
      for (const int end = i + run; i < end; ++i, p += r.s_token)
        out[i] = reinterpret_cast<const E*>(p);
    }
  }
  const uint8_t* scale_row(int n) const {
    const int64_t b = table[block_of(n)];
    return scales + b * sb_block + kv_head * sb_head + int64_t(slot_of(n)) * sb_token;
  }
};
// Rows of `row_bytes` laid back to back from `base` (staged tiles), as one block that never ends.
inline constexpr int32_t kDenseBlock = 0;
inline CacheRows dense_rows(const uint8_t* base, int64_t row_bytes) {
  return {base, 0, 0, row_bytes, nullptr, 0, 0, 0, &kDenseBlock, 1 << 30, 0};
}

// out[base + i] = v[i] * factor for i < n (v null: 0) in the model dtype; one loop per dtype (a
// switch per element took 4% of an fp32 prefill's profile samples).
inline void store_out_row(void* out, DType dt, int64_t base, const float* v, float factor, int n) {
  auto val = [&](int i) { return v ? v[i] * factor : 0.f; };
  switch (dt) {
    case DType::kFloat32: {
      float* dst = static_cast<float*>(out) + base;
      for (int i = 0; i < n; ++i) dst[i] = val(i);
      return;
    }
    case DType::kFloat16: {
      uint16_t* dst = static_cast<uint16_t*>(out) + base;
      for (int i = 0; i < n; ++i) dst[i] = float_to_fp16_bits(val(i));
      return;
    }
    case DType::kBFloat16: {
      uint16_t* dst = static_cast<uint16_t*>(out) + base;
      for (int i = 0; i < n; ++i) dst[i] = float_to_bf16_bits(val(i));
      return;
    }
  }
}

// Normalizes one row's unnormalized accumulator `o` (running max m, sum l over visible keys),
// adds the head's sink to the denominator once, and writes out[token, head] and the LSE.
// A row with no visible key (m = -inf) gets 0 output and LSE -inf (the sink logit with sinks).
inline void finalize_row(const AttentionArgs& a, int token, int head, const float* o, float m,
                         float l, float v_scale) {
  const AttentionLayerParams& L = a.layer;
  const int dv = L.head_size_v;
  const bool empty = m == kNegInf;
  const int64_t base = int64_t(token) * a.out_stride_token + int64_t(head) * a.out_stride_head;
  if (empty) {  // no visible key: 0 output; the LSE is the sink's logit alone, else -inf
    store_out_row(a.out, L.dtype, base, nullptr, 0.f, dv);
    if (a.lse) a.lse[int64_t(token) * L.num_heads + head] = L.sinks ? L.sinks[head] : kNegInf;
    return;
  }
  float denom = l, mm = m;
  if (L.sinks) {
    const float sink = L.sinks[head];
    mm = std::max(m, sink);
    denom = l * std::exp(m - mm) + std::exp(sink - mm);
  }
  const float factor = v_scale * std::exp(m - mm) / denom;  // denom >= exp(0) = 1
  store_out_row(a.out, L.dtype, base, o, factor, dv);
  if (a.lse) a.lse[int64_t(token) * L.num_heads + head] = mm + std::log(denom);
}

// Kernel entry points of one ISA variant.
struct KernelFns {
  Isa isa;
  bool bf16_dot;  // has the bf16 dot-product path (bf16 queries over a bf16 cache)
  // Runs one work item; `partials` is the split workspace ([rows][head_size_v + 2] floats:
  // m, l, o...). `use_bf16` selects the bf16 path (only when bf16_dot): decode-sized items on
  // its fp32-FMA form, larger ones on vdpbf16ps where `bf16_dots`, else on the fp32 path.
  void (*run_item)(const AttentionArgs& a, const WorkItem& w, float* scratch, float* partials,
                   bool use_bf16, bool bf16_dots);
};

const KernelFns& kernels_scalar();
const KernelFns& kernels_avx2();
const KernelFns& kernels_avx512();
const KernelFns& kernels_avx512_bf16();
const KernelFns& kernels_avx512_bf16_vbmi();  // the same variant built with AVX512_VBMI
const KernelFns& kernels_amx_bf16();
const KernelFns& kernels_for(Isa isa);
// vdpbf16ps issue rate over vfmadd231ps's on this core, measured once (kernel_avx512_bf16.cpp);
// call only where the AVX512_BF16 variant is supported.
double dpbf16_issue_ratio();
// fp8 rows (`rows` x d codes, back to back) -> bf16 bits as the AVX512_BF16 variant stages them,
// through its byte tables (AVX512_VBMI) or its word tables (cpu_flash_backend.hpp,
// stage_fp8_as_bf16, checks what the CPU supports).
void stage_fp8_rows_bf16(KvCacheDType dt, bool byte_tables, const uint8_t* codes, int rows, int d,
                         uint16_t* out);

}  // namespace attnkit::cpu_flash
