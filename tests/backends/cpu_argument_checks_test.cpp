// The argument checks of docs/semantics.md §6, shared by CPU_FLASH and CPU_REFERENCE
// (src/backends/common/validate.hpp): every rejected input is rejected by both, with the same
// rule in the message, the backend's name in front, and nothing written.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attnkit/error.hpp"
#include "backends/cpu_flash/cpu_flash_backend.hpp"
#include "backends/cpu_reference/cpu_reference_backend.hpp"

namespace attnkit {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// One fp32 sequence (2 queries, 5 keys) over a cache of 3 blocks of 4 slots, 2 query heads on
// one KV head of size 16 (a size CPU_FLASH runs).
struct Problem {
  static constexpr int kHq = 2, kD = 16, kBlock = 4, kBlocks = 3;
  std::vector<float> q = std::vector<float>(2 * kHq * kD, 0.5f);
  std::vector<float> k = std::vector<float>(kBlocks * kBlock * kD, 0.25f), v = k;
  std::vector<float> out = std::vector<float>(2 * kHq * kD, kNaN);
  std::vector<float> lse = std::vector<float>(2 * kHq, kNaN);
  std::vector<int32_t> cu{0, 2}, used{5}, table{2, 0};

  KvCacheView cache() {
    KvCacheView c;
    c.k = k.data();
    c.v = v.data();
    c.dtype = KvCacheDType::kAuto;  // fp32 storage
    c.num_blocks = kBlocks;
    c.block_size = kBlock;
    c.num_kv_heads = 1;
    c.head_size = c.head_size_v = kD;
    c.stride_token = c.v_stride_token = kD * 4;
    c.stride_head = c.v_stride_head = kBlock * kD * 4;
    c.stride_block = c.v_stride_block = kBlock * kD * 4;
    return c;
  }
  AttentionArgs args() {
    AttentionArgs a;
    a.q = q.data();
    a.q_stride_token = kHq * kD;
    a.q_stride_head = kD;
    a.out = out.data();
    a.out_stride_token = kHq * kD;
    a.out_stride_head = kD;
    a.lse = lse.data();
    a.kv = cache();
    a.batch.num_seqs = 1;
    a.batch.total_q = 2;
    a.batch.max_seqlen_q = 2;
    a.batch.max_seqlen_k = 5;
    a.batch.cu_seqlens_q = cu.data();
    a.batch.seqused_k = used.data();
    a.batch.block_table = table.data();
    a.batch.block_table_stride = 2;
    a.layer.num_heads = kHq;
    a.layer.num_kv_heads = 1;
    a.layer.head_size = a.layer.head_size_v = kD;
    a.layer.dtype = DType::kFloat32;
    a.layer.scale = 0.25f;
    return a;
  }
};

struct Backend {
  const char* name;
  std::function<std::unique_ptr<AttentionBackend>()> make;
};
const Backend kBackends[] = {{"CPU_FLASH", [] { return make_cpu_flash_backend(); }},
                             {"CPU_REFERENCE", [] { return make_cpu_reference_backend(); }}};

struct Bad {
  const char* needle;
  std::function<void(AttentionArgs&)> mutate;
};

TEST(CpuArgumentChecks, RunRejectsTheSameInputsOnBothBackends) {
  static float per_head_scales[1] = {1.f}, nan_scale[1] = {kNaN}, zero_scale[1] = {0.f},
               slopes_inf[2] = {0.5f, INFINITY}, sinks_nan[2] = {kNaN, 0.f},
               sinks_inf[2] = {1.f, INFINITY};
  static int32_t negative = -1, nine = 9, outside[2] = {2, 3}, cu_bad[2] = {1, 2};
  static uint8_t block_scales[64] = {};
  static int32_t mm_one[2] = {0, 1}, mm_two[2] = {0, 2}, mm_from1[2] = {1, 1}, mm_down[2] = {0, -1},
                 mm_empty[2] = {3, 3}, mm_long[2] = {3, 6}, mm_overlap[4] = {0, 3, 2, 4};
  auto ranges = [](int32_t* off, int32_t* r) {
    return [off, r](AttentionArgs& a) {
      a.batch.mm_prefix_offsets = off;
      a.batch.mm_prefix_ranges = r;
    };
  };
  auto fp8_scales = [](KvCacheDType dt, ScaleGranularity g, float* k, float* v) {
    return [=](AttentionArgs& a) {
      a.kv.dtype = dt;
      a.kv.scale_granularity = g;
      a.kv.k_scale = k;
      a.kv.v_scale = v;
    };
  };
  const std::vector<Bad> bad = {
      {"q and out must not be null", [](AttentionArgs& a) { a.q = nullptr; }},
      {"kv.k must not be null", [](AttentionArgs& a) { a.kv.k = nullptr; }},
      {"kv.v may be null only when V is the leading part of the K row (got head_size_v 32",
       [](AttentionArgs& a) {
         a.kv.v = nullptr;
         a.kv.head_size_v = a.layer.head_size_v = 32;
       }},
      {"block_table must not be null", [](AttentionArgs& a) { a.batch.block_table = nullptr; }},
      {"num_heads and num_kv_heads must be > 0 (got 0 and 1)",
       [](AttentionArgs& a) { a.layer.num_heads = 0; }},
      {"num_heads must be a multiple of num_kv_heads (got 2 and 3)",
       [](AttentionArgs& a) { a.layer.num_kv_heads = a.kv.num_kv_heads = 3; }},
      {"head_size and head_size_v must be > 0 (got 0 and 16)",
       [](AttentionArgs& a) { a.layer.head_size = 0; }},
      {"must match the layer", [](AttentionArgs& a) { a.kv.num_kv_heads = 2; }},
      {"scale must be finite (got nan)", [](AttentionArgs& a) { a.layer.scale = kNaN; }},
      {"logits_soft_cap must be finite and >= 0, 0 = off (got inf)",
       [](AttentionArgs& a) { a.layer.logits_soft_cap = INFINITY; }},
      {"logits_soft_cap must be finite and >= 0, 0 = off (got -1)",
       [](AttentionArgs& a) { a.layer.logits_soft_cap = -1.f; }},
      {"window_left/window_right must be >= -1 (got -2, -1)",
       [](AttentionArgs& a) { a.layer.window_left = -2; }},
      {"num_seqs and total_q must be >= 0", [](AttentionArgs& a) { a.batch.num_seqs = -1; }},
      {"cu_seqlens_q[0] must be 0 (got 1)",
       [](AttentionArgs& a) { a.batch.cu_seqlens_q = cu_bad; }},
      {"cu_seqlens_q[num_seqs] must equal total_q (got 2, expected 3)",
       [](AttentionArgs& a) { a.batch.total_q = 3; }},
      {"max_seqlen_q must be >= every q_len (sequence 0 has 2, max_seqlen_q 1)",
       [](AttentionArgs& a) { a.batch.max_seqlen_q = 1; }},
      {"max_seqlen_k must be >= every seqused_k (sequence 0 has 5, max_seqlen_k 4)",
       [](AttentionArgs& a) { a.batch.max_seqlen_k = 4; }},
      {"seqused_k[0] must be >= 0 (got -1)",
       [](AttentionArgs& a) { a.batch.seqused_k = &negative; }},
      {"seqused_k[0] = 9 exceeds the block-table row (block_table_stride 2 x block_size 4)",
       [](AttentionArgs& a) {
         a.batch.seqused_k = &nine;
         a.batch.max_seqlen_k = 9;
       }},
      {"block_table[0][1] = 3 is outside [0, num_blocks = 3)",
       [](AttentionArgs& a) { a.batch.block_table = outside; }},
      {"kv.block_size must be > 0 (got 0)", [](AttentionArgs& a) { a.kv.block_size = 0; }},
      {"kv.dtype auto (fp32 storage) is only valid for a float32 model (got model dtype "
       "bfloat16)",
       [](AttentionArgs& a) { a.layer.dtype = DType::kBFloat16; }},
      {"scales are only valid for quantized storage (got auto storage with scale granularity "
       "per-tensor)",
       [](AttentionArgs& a) { a.kv.scale_granularity = ScaleGranularity::kPerTensor; }},
      {"scales are only valid for quantized storage (got auto storage with scale granularity "
       "none and scale pointers)",
       [](AttentionArgs& a) { a.kv.k_scale = per_head_scales; }},
      {"per-head scales need an fp8 cache (got nvfp4)",
       [](AttentionArgs& a) {
         a.kv.dtype = KvCacheDType::kNvfp4;
         a.kv.scale_granularity = ScaleGranularity::kPerHead;
         a.kv.k_scale = a.kv.v_scale = per_head_scales;
         a.kv.k_block_scales = a.kv.v_block_scales = block_scales;
       }},
      {"kv.k_scale[0] must be finite and > 0 (got nan)",
       fp8_scales(KvCacheDType::kFp8E4M3, ScaleGranularity::kPerTensor, nan_scale,
                  per_head_scales)},
      {"kv.v_scale[0] must be finite and > 0 (got 0)",
       fp8_scales(KvCacheDType::kFp8E5M2, ScaleGranularity::kPerHead, per_head_scales, zero_scale)},
      {"alibi_slopes[1] must be finite (got inf)",
       [](AttentionArgs& a) { a.layer.alibi_slopes = slopes_inf; }},
      {"sinks[0] must be finite or -inf (got nan)",
       [](AttentionArgs& a) { a.layer.sinks = sinks_nan; }},
      {"sinks[1] must be finite or -inf (got inf)",
       [](AttentionArgs& a) { a.layer.sinks = sinks_inf; }},
      {"mm_prefix_offsets and mm_prefix_ranges must be given together",
       [](AttentionArgs& a) { a.batch.mm_prefix_offsets = mm_one; }},
      {"mm_prefix_offsets[0] must be 0 (got 1)", ranges(mm_from1, mm_long)},
      {"mm_prefix_offsets must be non-decreasing (sequence 0: 0 then -1)",
       ranges(mm_down, mm_long)},
      {"PrefixLM range [3, 3) of sequence 0 must be non-empty", ranges(mm_one, mm_empty)},
      {"PrefixLM range [2, 4) of sequence 0 must be non-empty and start at or after the "
       "previous range's end (3)",
       ranges(mm_two, mm_overlap)},
      {"PrefixLM range [3, 6) of sequence 0 ends past its seqused_k (5): a chunk must not split "
       "a bidirectional range",
       ranges(mm_one, mm_long)},
      {"nvfp4 cache needs k_block_scales and v_block_scales (got null)",
       [](AttentionArgs& a) {
         a.kv.dtype = KvCacheDType::kNvfp4;
         a.kv.scale_granularity = ScaleGranularity::kPerBlock16;
       }},
      {"needs block-scale strides for K (sb_*) and V (v_sb_*), got sb 4/2/1 and v_sb 0/0/0",
       [](AttentionArgs& a) {
         a.kv.dtype = KvCacheDType::kNvfp4;
         a.kv.scale_granularity = ScaleGranularity::kPerBlock16;
         a.kv.k_block_scales = a.kv.v_block_scales = block_scales;
         a.kv.sb_block = 4, a.kv.sb_head = 2, a.kv.sb_token = 1;
       }},
  };
  for (const Backend& b : kBackends) {
    SCOPED_TRACE(b.name);
    Problem p;
    auto be = b.make();
    const AttentionArgs good = p.args();
    be->plan(good.batch, good.layer);
    be->run(good);  // the unmutated problem runs
    for (float x : p.out) ASSERT_FALSE(std::isnan(x));
    std::fill(p.out.begin(), p.out.end(), kNaN);
    for (const Bad& x : bad) {
      AttentionArgs a = good;
      x.mutate(a);
      try {
        be->plan(good.batch, good.layer);
        be->run(a);
        ADD_FAILURE() << "accepted; expected InvalidArgument with '" << x.needle << "'";
      } catch (const InvalidArgument& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind(std::string(b.name) + ": ", 0), 0u) << what;
        EXPECT_NE(what.find(x.needle), std::string::npos) << what;
      }
    }
    for (float x : p.out) EXPECT_TRUE(std::isnan(x)) << "a rejected call wrote its output";
  }
}

// CPU_FLASH's work items follow the planned PrefixLM ranges: run() refuses other ones (or none
// where the plan had some, and the reverse) and writes nothing.
TEST(CpuArgumentChecks, CpuFlashRunNeedsThePlannedPrefixLmRanges) {
  static int32_t off[2] = {0, 1}, planned[2] = {1, 4}, other[2] = {1, 5};
  Problem p;
  auto be = make_cpu_flash_backend();
  AttentionArgs with = p.args();
  with.batch.mm_prefix_offsets = off;
  with.batch.mm_prefix_ranges = planned;
  be->plan(with.batch, with.layer);
  be->run(with);  // the planned ranges run
  for (float x : p.out) ASSERT_FALSE(std::isnan(x));
  std::fill(p.out.begin(), p.out.end(), kNaN);
  AttentionArgs moved = with, none = p.args();
  moved.batch.mm_prefix_ranges = other;
  for (const AttentionArgs* a : {&moved, &none}) {
    be->plan(with.batch, with.layer);
    EXPECT_THROW(be->run(*a), InvalidArgument);
  }
  be->plan(none.batch, none.layer);
  EXPECT_THROW(be->run(with), InvalidArgument);
  for (float x : p.out) EXPECT_TRUE(std::isnan(x)) << "a rejected call wrote its output";
}

// plan() checks the layer with the same rules as run().
TEST(CpuArgumentChecks, PlanRejectsABadLayerOnBothBackends) {
  for (const Backend& b : kBackends) {
    SCOPED_TRACE(b.name);
    Problem p;
    AttentionArgs a = p.args();
    a.layer.logits_soft_cap = INFINITY;
    EXPECT_THROW(b.make()->plan(a.batch, a.layer), InvalidArgument);
    a.layer.logits_soft_cap = 0.f;
    a.layer.num_kv_heads = 3;
    EXPECT_THROW(b.make()->plan(a.batch, a.layer), InvalidArgument);
    const float sinks[2] = {0.f, kNaN};
    a.layer.num_kv_heads = 1;
    a.layer.sinks = sinks;
    EXPECT_THROW(b.make()->plan(a.batch, a.layer), InvalidArgument);
  }
}

// A sink of -inf never takes weight: both backends give the output and LSE of no sink, for rows
// with keys and for rows with none (seqused_k 0: LSE -inf, not the NaN of -inf - -inf).
TEST(CpuArgumentChecks, AMinusInfinitySinkIsNoSink) {
  static const float sinks[2] = {-INFINITY, -INFINITY};
  static const int32_t no_keys[1] = {0};
  for (const Backend& b : kBackends) {
    SCOPED_TRACE(b.name);
    for (const int32_t* used : {static_cast<const int32_t*>(nullptr), no_keys}) {
      Problem plain, sunk;
      for (size_t i = 0; i < plain.q.size(); ++i) plain.q[i] = sunk.q[i] = 0.1f * float(i % 7);
      AttentionArgs a = plain.args(), s = sunk.args();
      s.layer.sinks = sinks;
      if (used) a.batch.seqused_k = s.batch.seqused_k = used;
      auto be = b.make();
      for (AttentionArgs* x : {&a, &s}) {
        be->plan(x->batch, x->layer);
        be->run(*x);
      }
      EXPECT_EQ(plain.out, sunk.out);
      EXPECT_EQ(plain.lse, sunk.lse);
      for (float x : sunk.lse) EXPECT_EQ(x == -INFINITY, used != nullptr) << x;
    }
  }
}

TEST(CpuArgumentChecks, WriteKvRejectsTheSameInputsOnBothBackends) {
  struct BadWrite {
    const char* needle;
    std::function<void(KvWriteArgs&)> mutate;
  };
  static const int64_t slot_outside[2] = {0, 12};
  const std::vector<BadWrite> bad = {
      {"num_tokens must be >= 0 (got -1)", [](KvWriteArgs& w) { w.num_tokens = -1; }},
      {"kv.k must not be null", [](KvWriteArgs& w) { w.cache.k = nullptr; }},
      {"write_kv: k and slot_mapping must not be null", [](KvWriteArgs& w) { w.k = nullptr; }},
      {"write_kv: v must be given exactly when the cache has a V tensor (got v null, cache v set",
       [](KvWriteArgs& w) { w.v = nullptr; }},
      {"write_kv: v must be given exactly when the cache has a V tensor (got v set, cache v null",
       [](KvWriteArgs& w) { w.cache.v = nullptr; }},
      {"write_kv: slot_mapping[1] = 12 is outside [-1, 12)",
       [](KvWriteArgs& w) { w.slot_mapping = slot_outside; }},
      {"scales are only valid for quantized storage",
       [](KvWriteArgs& w) { w.cache.scale_granularity = ScaleGranularity::kPerTensor; }},
      {"kv.k_scale[0] must be finite and > 0 (got -1)",
       [](KvWriteArgs& w) {
         static const float minus_one[1] = {-1.f};
         w.cache.dtype = KvCacheDType::kFp8E4M3;
         w.cache.scale_granularity = ScaleGranularity::kPerTensor;
         w.cache.k_scale = w.cache.v_scale = minus_one;
       }},
  };
  for (const Backend& b : kBackends) {
    SCOPED_TRACE(b.name);
    Problem p;
    const std::vector<float> rows(2 * Problem::kD, 3.f), k_before = p.k, v_before = p.v;
    const int64_t slots[2] = {0, 6};
    KvWriteArgs good;
    good.k = good.v = rows.data();
    good.dtype = DType::kFloat32;
    good.num_tokens = 2;
    good.k_stride_token = good.v_stride_token = Problem::kD;
    good.k_stride_head = good.v_stride_head = Problem::kD;
    good.slot_mapping = slots;
    good.cache = p.cache();
    auto be = b.make();
    for (const BadWrite& x : bad) {
      KvWriteArgs w = good;
      x.mutate(w);
      try {
        be->write_kv(w);
        ADD_FAILURE() << "accepted; expected InvalidArgument with '" << x.needle << "'";
      } catch (const InvalidArgument& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind(std::string(b.name) + ": ", 0), 0u) << what;
        EXPECT_NE(what.find(x.needle), std::string::npos) << what;
      }
    }
    EXPECT_EQ(p.k, k_before) << "a rejected write_kv wrote K";
    EXPECT_EQ(p.v, v_before) << "a rejected write_kv wrote V";
    be->write_kv(good);  // the unmutated write goes through
    EXPECT_EQ(p.k[0], 3.f);
    EXPECT_EQ(p.v[6 * Problem::kD], 3.f);
  }
}

}  // namespace
}  // namespace attnkit
