#include "backends/common/validate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"

namespace attnkit::backend_checks {
namespace {

[[noreturn]] void fail(std::string_view who, const std::string& what) {
  throw InvalidArgument(fmt::format("{}: {}", who, what));
}

bool is_quantized(KvCacheDType d) {
  return d == KvCacheDType::kFp8E4M3 || d == KvCacheDType::kFp8E5M2 || d == KvCacheDType::kNvfp4;
}

// `need_v`: run() reads V, so a null V must be the MLA form (V inside the K row). write_kv()
// checks V against the caller's v instead.
void check_cache_view(std::string_view who, const KvCacheView& kv, DType model, bool need_v) {
  if (!kv.k) fail(who, "kv.k must not be null");
  if (need_v && !kv.v && kv.head_size_v > kv.head_size)
    fail(who, fmt::format("kv.v may be null only when V is the leading part of the K row "
                          "(got head_size_v {} > head_size {})",
                          kv.head_size_v, kv.head_size));
  if (kv.num_blocks < 0)
    fail(who, fmt::format("kv.num_blocks must be >= 0 (got {})", kv.num_blocks));
  if (kv.block_size <= 0)
    fail(who, fmt::format("kv.block_size must be > 0 (got {})", kv.block_size));
  if (kv.num_kv_heads <= 0 || kv.head_size <= 0 || kv.head_size_v <= 0)
    fail(who, fmt::format("kv head count and sizes must be > 0 (got heads {}, head_size {}, "
                          "head_size_v {})",
                          kv.num_kv_heads, kv.head_size, kv.head_size_v));
  if (kv.dtype == KvCacheDType::kAuto && model != DType::kFloat32)
    fail(who,
         fmt::format("kv.dtype auto (fp32 storage) is only valid for a float32 model (got model "
                     "dtype {}); resolve the cache dtype first",
                     to_string(model)));
  if (kv.scale_granularity == ScaleGranularity::kPerHead && kv.dtype != KvCacheDType::kFp8E4M3 &&
      kv.dtype != KvCacheDType::kFp8E5M2)
    fail(who, fmt::format("per-head scales need an fp8 cache (got {})", to_string(kv.dtype)));
  if (is_quantized(kv.dtype)) {
    // A NaN, zero or infinite scale turns every row it dequantizes into NaN or zeros.
    const CheckedScales sc = checked_scales(kv);
    for (const auto& [rule, s] : {std::pair{ValueRule::kKScale, sc.k}, {ValueRule::kVScale, sc.v}})
      for (int i = 0; s && i < sc.count; ++i)
        if (!(s[i] > 0.f) || !std::isfinite(s[i])) fail(who, value_rule_message(rule, i, s[i]));
    if (kv.dtype == KvCacheDType::kNvfp4 && (!kv.k_block_scales || (kv.v && !kv.v_block_scales)))
      fail(who, "nvfp4 cache needs k_block_scales and v_block_scales (got null)");
    // Zero strides would give every block one row of scales (V's took K's strides before
    // v_sb_* existed: a caller still setting only sb_* is refused, not misread).
    auto no_strides = [](int64_t b, int64_t h, int64_t t) { return b == 0 && h == 0 && t == 0; };
    if (kv.dtype == KvCacheDType::kNvfp4 && kv.num_blocks > 1 &&
        (no_strides(kv.sb_block, kv.sb_head, kv.sb_token) ||
         (kv.v && no_strides(kv.v_sb_block, kv.v_sb_head, kv.v_sb_token))))
      fail(who, fmt::format("nvfp4 cache of {} blocks needs block-scale strides for K (sb_*) and "
                            "V (v_sb_*), got sb {}/{}/{} and v_sb {}/{}/{} (block/head/token)",
                            kv.num_blocks, kv.sb_block, kv.sb_head, kv.sb_token, kv.v_sb_block,
                            kv.v_sb_head, kv.v_sb_token));
  } else if (kv.scale_granularity != ScaleGranularity::kNone || kv.k_scale || kv.v_scale) {
    fail(who, fmt::format("scales are only valid for quantized storage (got {} storage with scale "
                          "granularity {}{})",
                          to_string(kv.dtype), to_string(kv.scale_granularity),
                          kv.k_scale || kv.v_scale ? " and scale pointers" : ""));
  }
}

}  // namespace

void check_layer(std::string_view who, const AttentionLayerParams& L) {
  if (L.num_heads <= 0 || L.num_kv_heads <= 0)
    fail(who, fmt::format("num_heads and num_kv_heads must be > 0 (got {} and {})", L.num_heads,
                          L.num_kv_heads));
  if (L.num_heads % L.num_kv_heads != 0)
    fail(who, fmt::format("num_heads must be a multiple of num_kv_heads (got {} and {})",
                          L.num_heads, L.num_kv_heads));
  if (L.head_size <= 0 || L.head_size_v <= 0)
    fail(who, fmt::format("head_size and head_size_v must be > 0 (got {} and {})", L.head_size,
                          L.head_size_v));
  if (!std::isfinite(L.scale)) fail(who, fmt::format("scale must be finite (got {})", L.scale));
  if (!std::isfinite(L.logits_soft_cap) || L.logits_soft_cap < 0.f)
    fail(who, fmt::format("logits_soft_cap must be finite and >= 0, 0 = off (got {})",
                          L.logits_soft_cap));
  if (L.window_left < -1 || L.window_right < -1)
    fail(who, fmt::format("window_left/window_right must be >= -1 (got {}, {})", L.window_left,
                          L.window_right));
  if (L.attention_chunk_size < 0)
    fail(who, fmt::format("attention_chunk_size must be >= 0, 0 = off (got {})",
                          L.attention_chunk_size));
  // Slopes and sinks are read per query head; a NaN in either reaches the head's every row.
  // A sink of -inf is one that never takes weight (the same output as no sink).
  for (int h = 0; L.alibi_slopes && h < L.num_heads; ++h)
    if (!std::isfinite(L.alibi_slopes[h]))
      fail(who, value_rule_message(ValueRule::kSlope, h, L.alibi_slopes[h]));
  for (int h = 0; L.sinks && h < L.num_heads; ++h)
    if (std::isnan(L.sinks[h]) || L.sinks[h] == std::numeric_limits<float>::infinity())
      fail(who, value_rule_message(ValueRule::kSink, h, L.sinks[h]));
}

CheckedScales checked_scales(const KvCacheView& kv) {
  if (!is_quantized(kv.dtype)) return {};
  return {kv.k_scale, kv.v_scale,
          kv.scale_granularity == ScaleGranularity::kPerHead ? kv.num_kv_heads : 1};
}

std::string value_rule_message(ValueRule rule, int index, float value) {
  switch (rule) {
    case ValueRule::kSlope:
      return fmt::format("alibi_slopes[{}] must be finite (got {})", index, value);
    case ValueRule::kSink:
      return fmt::format("sinks[{}] must be finite or -inf (got {})", index, value);
    case ValueRule::kKScale:
    case ValueRule::kVScale:
      break;
  }
  return fmt::format("kv.{}[{}] must be finite and > 0 (got {})",
                     rule == ValueRule::kKScale ? "k_scale" : "v_scale", index, value);
}

void check_mm_prefix_ranges(std::string_view who, const AttentionBatch& B) {
  if (!B.mm_prefix_offsets && !B.mm_prefix_ranges) return;
  if (!B.mm_prefix_offsets || !B.mm_prefix_ranges)
    fail(who, "mm_prefix_offsets and mm_prefix_ranges must be given together");
  if (B.num_seqs > 0 && !B.seqused_k) fail(who, "seqused_k must not be null when num_seqs > 0");
  if (B.mm_prefix_offsets[0] != 0)
    fail(who, mm_rule_message(MmRule::kFirst, 0, B.mm_prefix_offsets[0], 0, 0));
  for (int s = 0; s < B.num_seqs; ++s) {
    const int32_t r0 = B.mm_prefix_offsets[s], r1 = B.mm_prefix_offsets[s + 1];
    if (r1 < r0) fail(who, mm_rule_message(MmRule::kOffsets, s, r0, r1, 0));
    int32_t prev_end = 0;
    for (int32_t r = r0; r < r1; ++r) {
      const int32_t start = B.mm_prefix_ranges[2 * r], end = B.mm_prefix_ranges[2 * r + 1];
      if (start < prev_end || end <= start)
        fail(who, mm_rule_message(MmRule::kOrder, s, start, end, prev_end));
      if (end > B.seqused_k[s])
        fail(who, mm_rule_message(MmRule::kPastSeqused, s, start, end, B.seqused_k[s]));
      prev_end = end;
    }
  }
}

std::string mm_rule_message(MmRule rule, int seq, int64_t a, int64_t b, int64_t c) {
  switch (rule) {
    case MmRule::kFirst:
      return fmt::format("mm_prefix_offsets[0] must be 0 (got {})", a);
    case MmRule::kOffsets:
      return fmt::format("mm_prefix_offsets must be non-decreasing (sequence {}: {} then {})", seq,
                         a, b);
    case MmRule::kOrder:
      return fmt::format(
          "PrefixLM range [{}, {}) of sequence {} must be non-empty and start at or after the "
          "previous range's end ({})",
          a, b, seq, c);
    case MmRule::kPastSeqused:
      break;
  }
  return fmt::format(
      "PrefixLM range [{}, {}) of sequence {} ends past its seqused_k ({}): a chunk must not "
      "split a bidirectional range",
      a, b, seq, c);
}

void check_attention_args(std::string_view who, const AttentionArgs& a) {
  const AttentionLayerParams& L = a.layer;
  const AttentionBatch& B = a.batch;
  check_layer(who, L);
  if (a.kv.num_kv_heads != L.num_kv_heads || a.kv.head_size != L.head_size ||
      a.kv.head_size_v != L.head_size_v)
    fail(who,
         fmt::format("cache shape (kv heads {}, head_size {}, head_size_v {}) must match the layer "
                     "(kv heads {}, head_size {}, head_size_v {})",
                     a.kv.num_kv_heads, a.kv.head_size, a.kv.head_size_v, L.num_kv_heads,
                     L.head_size, L.head_size_v));
  check_cache_view(who, a.kv, L.dtype, true);

  if (B.num_seqs < 0 || B.total_q < 0)
    fail(who,
         fmt::format("num_seqs and total_q must be >= 0 (got {} and {})", B.num_seqs, B.total_q));
  if (B.total_q > 0 && (!a.q || !a.out)) fail(who, "q and out must not be null when total_q > 0");
  if (B.num_seqs > 0 && (!B.cu_seqlens_q || !B.seqused_k || !B.block_table))
    fail(who, "cu_seqlens_q, seqused_k and block_table must not be null when num_seqs > 0");
  if (B.num_seqs == 0) {
    if (B.total_q != 0)
      fail(who, fmt::format("total_q must be 0 without sequences (got {})", B.total_q));
    return;
  }
  auto broken = [&](BatchRule rule, int seq, int64_t entry, int64_t value) {
    fail(who, batch_rule_message(rule, B, a.kv.block_size, a.kv.num_blocks, seq, entry, value));
  };
  if (B.cu_seqlens_q[0] != 0) broken(BatchRule::kCuFirst, 0, 0, B.cu_seqlens_q[0]);
  if (B.cu_seqlens_q[B.num_seqs] != B.total_q)
    broken(BatchRule::kCuTotal, 0, 0, B.cu_seqlens_q[B.num_seqs]);
  const int64_t row_capacity = int64_t(B.block_table_stride) * a.kv.block_size;
  for (int s = 0; s < B.num_seqs; ++s) {
    const int q_len = B.cu_seqlens_q[s + 1] - B.cu_seqlens_q[s];
    if (q_len < 0) broken(BatchRule::kQDecreasing, s, 0, q_len);
    if (q_len > B.max_seqlen_q) broken(BatchRule::kQMax, s, 0, q_len);
    const int k_len = B.seqused_k[s];
    if (k_len < 0) broken(BatchRule::kKNegative, s, 0, k_len);
    if (k_len > B.max_seqlen_k) broken(BatchRule::kKMax, s, 0, k_len);
    if (k_len > row_capacity) broken(BatchRule::kKRow, s, 0, k_len);
    const int used_blocks = (k_len + a.kv.block_size - 1) / a.kv.block_size;
    for (int c = 0; c < used_blocks; ++c) {
      const int32_t b = B.block_table[int64_t(s) * B.block_table_stride + c];
      if (b < 0 || b >= a.kv.num_blocks) broken(BatchRule::kBlock, s, c, b);
    }
  }
  check_mm_prefix_ranges(who, B);
}

std::string batch_rule_message(BatchRule rule, const AttentionBatch& b, int block_size,
                               int num_blocks, int seq, int64_t entry, int64_t value) {
  switch (rule) {
    case BatchRule::kCuFirst:
      return fmt::format("cu_seqlens_q[0] must be 0 (got {})", value);
    case BatchRule::kCuTotal:
      return fmt::format("cu_seqlens_q[num_seqs] must equal total_q (got {}, expected {})", value,
                         b.total_q);
    case BatchRule::kQDecreasing:
      return fmt::format("cu_seqlens_q must be non-decreasing (sequence {})", seq);
    case BatchRule::kQMax:
      return fmt::format(
          "max_seqlen_q must be >= every q_len (sequence {} has {}, max_seqlen_q {})", seq, value,
          b.max_seqlen_q);
    case BatchRule::kKNegative:
      return fmt::format("seqused_k[{}] must be >= 0 (got {})", seq, value);
    case BatchRule::kKMax:
      return fmt::format(
          "max_seqlen_k must be >= every seqused_k (sequence {} has {}, max_seqlen_k {})", seq,
          value, b.max_seqlen_k);
    case BatchRule::kKRow:
      return fmt::format(
          "seqused_k[{}] = {} exceeds the block-table row (block_table_stride {} x block_size {})",
          seq, value, b.block_table_stride, block_size);
    case BatchRule::kBlock:
      break;
  }
  return fmt::format("block_table[{}][{}] = {} is outside [0, num_blocks = {})", seq, entry, value,
                     num_blocks);
}

std::string slot_rule_message(int64_t token, int64_t slot, int64_t slots) {
  return fmt::format("slot_mapping[{}] = {} is outside [-1, {})", token, slot, slots);
}

void check_write_args(std::string_view who, const KvWriteArgs& w) {
  const KvCacheView& kv = w.cache;
  if (w.num_tokens < 0) fail(who, fmt::format("num_tokens must be >= 0 (got {})", w.num_tokens));
  check_cache_view(who, kv, w.dtype, false);
  if (w.num_tokens == 0) return;
  if (!w.k || !w.slot_mapping) fail(who, "write_kv: k and slot_mapping must not be null");
  if (bool(kv.v) != bool(w.v))
    fail(who, fmt::format("write_kv: v must be given exactly when the cache has a V tensor (got v "
                          "{}, cache v {}; "
                          "MLA latent caches take k only)",
                          w.v ? "set" : "null", kv.v ? "set" : "null"));
  const int64_t slots = int64_t(kv.num_blocks) * kv.block_size;
  for (int t = 0; t < w.num_tokens; ++t) {
    const int64_t slot = w.slot_mapping[t];
    if (slot < -1 || slot >= slots)
      fail(who, fmt::format("write_kv: {}", slot_rule_message(t, slot, slots)));
  }
}

}  // namespace attnkit::backend_checks
