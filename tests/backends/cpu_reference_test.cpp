// CPU_REFERENCE against hand-computed values (docs/semantics.md), and its argument checks. The
// generated sweep lives in tests/conformance/.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "attnkit/error.hpp"
#include "attnkit/numeric.hpp"
#include "backends/cpu_reference/cpu_reference_backend.hpp"

namespace attnkit {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// A tiny fp32 problem: one sequence, contiguous fp32 cache (one block), Hkv KV heads.
struct Tiny {
  int Hq = 1, Hkv = 1, D = 2, Dv = 2, q_len = 1, k_len = 2, block = 4;
  std::vector<float> q, k, v, out, lse;  // q [q_len, Hq, D]; k/v HND [1, Hkv, block, D]
  std::vector<int32_t> cu, used, table = {0};
  AttentionLayerParams layer;

  void init() {
    q.assign(size_t(q_len) * Hq * D, 0.f);
    k.assign(size_t(Hkv) * block * D, kNaN);  // unused slots stay NaN
    v.assign(size_t(Hkv) * block * Dv, kNaN);
    for (int g = 0; g < Hkv; ++g)
      for (int j = 0; j < k_len; ++j) {
        for (int d = 0; d < D; ++d) kat(g, j, d) = 0.f;
        for (int d = 0; d < Dv; ++d) vat(g, j, d) = 0.f;
      }
    out.assign(size_t(q_len) * Hq * Dv + 4, kNaN);  // 4 canaries past the end
    lse.assign(size_t(q_len) * Hq + 1, kNaN);
    cu = {0, q_len};
    used = {k_len};
    layer.num_heads = Hq;
    layer.num_kv_heads = Hkv;
    layer.head_size = D;
    layer.head_size_v = Dv;
    layer.dtype = DType::kFloat32;
    layer.scale = 1.f;
  }
  float& kat(int g, int j, int d) { return k[(size_t(g) * block + j) * D + d]; }
  float& vat(int g, int j, int d) { return v[(size_t(g) * block + j) * Dv + d]; }
  float& qat(int i, int h, int d) { return q[(size_t(i) * Hq + h) * D + d]; }
  float o(int i, int h, int d) const { return out[(size_t(i) * Hq + h) * Dv + d]; }
  float l(int i, int h) const { return lse[size_t(i) * Hq + h]; }

  AttentionArgs args() {
    AttentionArgs a;
    a.q = q.data();
    a.q_stride_token = int64_t(Hq) * D;
    a.q_stride_head = D;
    a.out = out.data();
    a.out_stride_token = int64_t(Hq) * Dv;
    a.out_stride_head = Dv;
    a.lse = lse.data();
    a.kv.k = k.data();
    a.kv.v = v.data();
    a.kv.dtype = KvCacheDType::kAuto;  // fp32 storage
    a.kv.num_blocks = 1;
    a.kv.block_size = block;
    a.kv.num_kv_heads = Hkv;
    a.kv.head_size = D;
    a.kv.head_size_v = Dv;
    a.kv.stride_token = int64_t(D) * 4;
    a.kv.stride_head = a.kv.stride_token * block;
    a.kv.stride_block = a.kv.stride_head * Hkv;
    a.kv.v_stride_token = int64_t(Dv) * 4;
    a.kv.v_stride_head = a.kv.v_stride_token * block;
    a.kv.v_stride_block = a.kv.v_stride_head * Hkv;
    a.batch.num_seqs = 1;
    a.batch.total_q = q_len;
    a.batch.max_seqlen_q = q_len;
    a.batch.max_seqlen_k = k_len;
    a.batch.cu_seqlens_q = cu.data();
    a.batch.seqused_k = used.data();
    a.batch.block_table = table.data();
    a.batch.block_table_stride = 1;
    a.layer = layer;
    return a;
  }
  void run() { run(args()); }
  void run(const AttentionArgs& a) {
    auto be = make_cpu_reference_backend();
    be->plan(a.batch, a.layer);
    be->run(a);
  }
};

TEST(CpuReference, TwoKeysByHand) {
  Tiny t;
  t.init();
  t.qat(0, 0, 0) = 1.f;
  t.kat(0, 0, 0) = 1.f;  // logit 1
  t.kat(0, 1, 1) = 1.f;  // logit 0
  t.vat(0, 0, 0) = 1.f, t.vat(0, 0, 1) = 2.f, t.vat(0, 1, 0) = 3.f, t.vat(0, 1, 1) = 4.f;
  t.run();
  const double e = std::exp(1.0), p0 = e / (e + 1), p1 = 1 / (e + 1);
  EXPECT_FLOAT_EQ(t.o(0, 0, 0), float(p0 * 1 + p1 * 3));
  EXPECT_FLOAT_EQ(t.o(0, 0, 1), float(p0 * 2 + p1 * 4));
  EXPECT_FLOAT_EQ(t.l(0, 0), float(std::log(e + 1)));
  for (int i = 2; i < 6; ++i) EXPECT_TRUE(std::isnan(t.out[i])) << "wrote past out";
  EXPECT_TRUE(std::isnan(t.lse[1])) << "wrote past lse";
}

TEST(CpuReference, SinkJoinsTheDenominatorOnceWithoutValue) {
  Tiny t;
  t.init();
  t.qat(0, 0, 0) = 1.f;
  t.kat(0, 0, 0) = 1.f;
  t.vat(0, 0, 0) = 1.f, t.vat(0, 1, 0) = 3.f;
  const float sink = 0.5f;
  t.layer.sinks = &sink;
  t.layer.scale = 2.f;  // the sink is not scaled
  t.run();
  const double z = std::exp(2.0) + 1 + std::exp(0.5);
  EXPECT_FLOAT_EQ(t.o(0, 0, 0), float((std::exp(2.0) * 1 + 1 * 3) / z));
  EXPECT_FLOAT_EQ(t.l(0, 0), float(std::log(z)));
}

TEST(CpuReference, EmptyRowsAreZeroWithMinusInfLse) {
  Tiny t;
  t.k_len = 0;
  t.init();
  t.run();
  EXPECT_EQ(t.o(0, 0, 0), 0.f);
  EXPECT_EQ(t.o(0, 0, 1), 0.f);
  EXPECT_TRUE(std::isinf(t.l(0, 0)) && t.l(0, 0) < 0);
  // With a sink: out 0, lse = the sink logit.
  const float sink = 1.25f;
  t.layer.sinks = &sink;
  t.init();
  t.layer.sinks = &sink;
  t.run();
  EXPECT_EQ(t.o(0, 0, 0), 0.f);
  EXPECT_FLOAT_EQ(t.l(0, 0), 1.25f);
}

// scale = 0 makes every visible key weigh the same: the output is the mean of the visible V
// rows, which exposes the mask exactly. V row j = (j, 1).
Tiny uniform(int q_len, int k_len) {
  Tiny t;
  t.q_len = q_len;
  t.k_len = k_len;
  t.block = 8;
  t.init();
  for (int j = 0; j < k_len; ++j) t.vat(0, j, 0) = float(j), t.vat(0, j, 1) = 1.f;
  t.layer.scale = 0.f;
  return t;
}
double mean_index(int lo, int hi) { return (lo + hi) / 2.0; }  // of keys lo..hi

TEST(CpuReference, CausalIsBottomRightAligned) {
  Tiny t = uniform(2, 5);  // rows at key positions 3 and 4
  t.run();
  EXPECT_FLOAT_EQ(t.o(0, 0, 0), float(mean_index(0, 3)));
  EXPECT_FLOAT_EQ(t.o(1, 0, 0), float(mean_index(0, 4)));
  EXPECT_FLOAT_EQ(t.l(0, 0), float(std::log(4.0)));
  Tiny u = uniform(3, 1);  // q_len > k_len: rows 0 and 1 sit before the first key
  u.run();
  EXPECT_EQ(u.o(0, 0, 0), 0.f);
  EXPECT_TRUE(std::isinf(u.l(0, 0)));
  EXPECT_TRUE(std::isinf(u.l(1, 0)));
  EXPECT_FLOAT_EQ(u.o(2, 0, 1), 1.f);
}

TEST(CpuReference, SlidingWindowAndNonCausal) {
  Tiny t = uniform(2, 6);   // positions 4, 5
  t.layer.window_left = 1;  // HF window 2: the key itself and one before
  t.run();
  EXPECT_FLOAT_EQ(t.o(0, 0, 0), float(mean_index(3, 4)));
  EXPECT_FLOAT_EQ(t.o(1, 0, 0), float(mean_index(4, 5)));
  Tiny n = uniform(2, 6);
  n.layer.causal = false;
  n.layer.window_left = n.layer.window_right = 1;  // symmetric
  n.run();
  EXPECT_FLOAT_EQ(n.o(0, 0, 0), float(mean_index(3, 5)));
  EXPECT_FLOAT_EQ(n.o(1, 0, 0), float(mean_index(4, 5)));
  Tiny f = uniform(1, 6);
  f.layer.causal = false;
  f.run();
  EXPECT_FLOAT_EQ(f.o(0, 0, 0), float(mean_index(0, 5)));
}

TEST(CpuReference, AlibiIsMinusSlopeTimesDistance) {
  Tiny t = uniform(1, 3);  // position 2
  const float slope = 0.5f;
  t.layer.alibi_slopes = &slope;
  t.run();
  const double w0 = std::exp(-1.0), w1 = std::exp(-0.5), w2 = 1.0, z = w0 + w1 + w2;
  EXPECT_FLOAT_EQ(t.o(0, 0, 0), float((w1 * 1 + w2 * 2) / z));
  EXPECT_FLOAT_EQ(t.l(0, 0), float(std::log(z)));
}

TEST(CpuReference, SoftcapThenAlibi) {
  Tiny t;
  t.init();
  t.qat(0, 0, 0) = 10.f;
  t.kat(0, 0, 0) = 1.f;  // logit 10 at distance 1, key 1 logit 0 at distance 0
  t.vat(0, 0, 0) = 1.f;
  t.layer.logits_soft_cap = 5.f;
  const float slope = 2.f;
  t.layer.alibi_slopes = &slope;
  t.run();
  const double x0 = 5 * std::tanh(2.0) - 2.0, x1 = 0.0;
  EXPECT_FLOAT_EQ(t.o(0, 0, 0), float(std::exp(x0) / (std::exp(x0) + std::exp(x1))));
}

TEST(CpuReference, GqaHeadMapping) {
  Tiny t = uniform(1, 2);
  t.Hq = 6;
  t.Hkv = 2;  // heads 0-2 read KV head 0, heads 3-5 KV head 1
  t.init();
  for (int j = 0; j < 2; ++j) t.vat(0, j, 0) = 1.f, t.vat(1, j, 0) = 7.f;
  t.layer.scale = 0.f;
  t.run();
  for (int h = 0; h < 6; ++h) EXPECT_EQ(t.o(0, h, 0), h < 3 ? 1.f : 7.f) << h;
}

TEST(CpuReference, MlaValueIsTheLeadingPartOfTheKeyRow) {
  Tiny t;
  t.D = 4;
  t.Dv = 2;
  t.k_len = 1;
  t.init();
  for (int d = 0; d < 4; ++d) t.kat(0, 0, d) = float(d + 1);
  AttentionArgs a = t.args();
  a.kv.v = nullptr;
  t.run(a);
  EXPECT_EQ(t.o(0, 0, 0), 1.f);
  EXPECT_EQ(t.o(0, 0, 1), 2.f);
}

TEST(CpuReference, Nvfp4DequantizesElementTimesBlockScaleTimesTensorScale) {
  // One key, D = 2: byte 0x21 holds e2m1 0.5 (low nibble, element 0) and 1.0 (element 1).
  uint8_t k[4] = {0x21, 0, 0, 0}, bs[4] = {0x40, 0, 0, 0};  // e4m3 0x40 = 2.0
  const float tensor_scale = 0.25f;
  Tiny t;
  t.k_len = 1;
  t.block = 1;
  t.init();
  AttentionArgs a = t.args();
  a.layer.scale = 0.f;
  a.kv.k = k;
  a.kv.v = nullptr;  // V = K row
  a.kv.dtype = KvCacheDType::kNvfp4;
  a.kv.scale_granularity = ScaleGranularity::kPerBlock16;
  a.kv.k_scale = &tensor_scale;
  a.kv.k_block_scales = bs;
  a.kv.stride_token = a.kv.stride_head = a.kv.stride_block = 1;
  a.kv.sb_token = a.kv.sb_head = a.kv.sb_block = 1;
  t.run(a);
  EXPECT_EQ(t.o(0, 0, 0), 0.25f);
  EXPECT_EQ(t.o(0, 0, 1), 0.5f);
}

TEST(CpuReference, WriteKvThenAttendRoundTrips) {
  Tiny t;
  t.k_len = 1;
  t.init();
  AttentionArgs a = t.args();
  a.kv.dtype = KvCacheDType::kFp8E4M3;
  std::vector<uint8_t> kc(8, 0x7f), vc(8, 0x7f);  // NaN
  a.kv.k = kc.data();
  a.kv.v = vc.data();
  a.kv.stride_token = a.kv.v_stride_token = 2;
  a.kv.stride_head = a.kv.v_stride_head = a.kv.stride_block = a.kv.v_stride_block = 8;
  const float ks = 0.5f, vs = 2.f;
  a.kv.scale_granularity = ScaleGranularity::kPerTensor;
  a.kv.k_scale = &ks;
  a.kv.v_scale = &vs;
  const float kin[2] = {1.f, -3.f}, vin[2] = {5.f, 1000.f};  // 1000/2 = 500 saturates to 448
  const int64_t slot = 0;
  KvWriteArgs w;
  w.k = kin;
  w.v = vin;
  w.dtype = DType::kFloat32;
  w.num_tokens = 1;
  w.k_stride_token = w.v_stride_token = 2;
  w.k_stride_head = w.v_stride_head = 2;
  w.slot_mapping = &slot;
  w.cache = a.kv;
  auto be = make_cpu_reference_backend();
  be->write_kv(w);
  EXPECT_EQ(kc[0], float_to_fp8_e4m3(2.f));
  EXPECT_EQ(kc[1], float_to_fp8_e4m3(-6.f));
  EXPECT_EQ(kc[2], 0x7f) << "wrote past the slot";
  a.layer.scale = 0.f;
  t.run(a);
  EXPECT_EQ(t.o(0, 0, 0), 5.f);
  EXPECT_EQ(t.o(0, 0, 1), 896.f);  // 448 * 2
}

void expect_invalid(const AttentionArgs& a, const std::string& needle) {
  auto be = make_cpu_reference_backend();
  try {
    be->run(a);
    ADD_FAILURE() << "accepted; expected InvalidArgument mentioning '" << needle << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(CpuReference, RejectsBadArguments) {
  Tiny t;
  t.Hq = 3;
  t.Hkv = 1;
  t.init();
  AttentionArgs good = t.args();
  {
    AttentionArgs a = good;
    a.q = nullptr;
    expect_invalid(a, "q and out");
  }
  {
    AttentionArgs a = good;
    a.layer.num_kv_heads = a.kv.num_kv_heads = 2;
    expect_invalid(a, "multiple of num_kv_heads");
  }
  {
    AttentionArgs a = good;
    a.kv.num_kv_heads = 3;
    expect_invalid(a, "must match the layer");
  }
  {
    int32_t bad = 1;  // num_blocks is 1
    AttentionArgs a = good;
    a.batch.block_table = &bad;
    expect_invalid(a, "outside [0, num_blocks = 1)");
    bad = -1;
    expect_invalid(a, "block_table[0][0] = -1");
  }
  {
    int32_t used = 5;  // one block of 4
    AttentionArgs a = good;
    a.batch.seqused_k = &used;
    a.batch.max_seqlen_k = 5;
    expect_invalid(a, "exceeds the block-table row");
    used = -1;
    expect_invalid(a, "seqused_k[0] must be >= 0");
  }
  {
    int32_t cu[2] = {0, 2};
    AttentionArgs a = good;
    a.batch.cu_seqlens_q = cu;
    expect_invalid(a, "cu_seqlens_q[num_seqs] must equal total_q");
  }
  {
    AttentionArgs a = good;
    a.layer.dtype = a.kv.dtype == KvCacheDType::kAuto ? DType::kBFloat16 : a.layer.dtype;
    expect_invalid(a, "only valid for a float32 model");
  }
  {
    AttentionArgs a = good;
    const float s = 1.f;
    a.kv.k_scale = &s;
    expect_invalid(a, "only valid for quantized storage");
  }
  {
    AttentionArgs a = good;
    a.kv.dtype = KvCacheDType::kNvfp4;
    expect_invalid(a, "nvfp4 cache needs k_block_scales");
  }
  {
    AttentionArgs a = good;
    a.layer.logits_soft_cap = -1.f;
    expect_invalid(a, "logits_soft_cap");
    a.layer.logits_soft_cap = 0.f;
    a.layer.window_left = -2;
    expect_invalid(a, "window_left/window_right");
  }
  {
    AttentionArgs a = good;
    a.kv.v = nullptr;
    a.kv.head_size_v = a.layer.head_size_v = 3;  // V longer than the K row
    expect_invalid(a, "kv.v may be null only");
  }
  // Nothing was written by any rejected call.
  for (float x : t.out) EXPECT_TRUE(std::isnan(x));
}

TEST(CpuReference, WriteKvRejectsSlotsOutsideTheCache) {
  Tiny t;
  t.init();
  AttentionArgs a = t.args();
  const float row[2] = {1.f, 2.f};
  const int64_t slot = 4;  // 1 block x 4 slots
  KvWriteArgs w;
  w.k = w.v = row;
  w.dtype = DType::kFloat32;
  w.num_tokens = 1;
  w.slot_mapping = &slot;
  w.cache = a.kv;
  auto be = make_cpu_reference_backend();
  EXPECT_THROW(be->write_kv(w), InvalidArgument);
}

}  // namespace
}  // namespace attnkit
