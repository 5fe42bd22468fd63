// Conformance harness (header-only, shared by every backend's tests; include it by relative path
// as "../conformance/harness.hpp"). It builds one attention case on the host from a CaseConfig:
// random normal inputs (never zeros), a paged cache in the canonical HND layout with shuffled
// block tables, NaN-poisoned unused slots and blocks, garbage in unused block-table columns and
// padded strides; copies it into a backend's memory space through a MemorySpace hook; runs the
// backend into a NaN-poisoned output buffer; and compares against an oracle with tolerances
// scaled to the dtype (see tolerance_for). docs/semantics.md is the definition being checked.
//
// Use from another test folder (e.g. a GPU backend's own tests):
//   #include "../conformance/harness.hpp"
//   CaseConfig cfg;  cfg.dtype = DType::kBFloat16;  cfg.kv_dtype = KvCacheDType::kFp8E4M3;
//   cfg.num_heads = 8;  cfg.num_kv_heads = 2;  cfg.head_size = cfg.head_size_v = 128;
//   cfg.block_size = 16;  cfg.seqs = {{1, 1013}, {5, 97}};  cfg.sinks = true;  cfg.seed = 7;
//   HostCase hc = build_case(cfg);
//   MyCudaMemory mem;                                  // a MemorySpace (cuda_memory.hpp)
//   RunOutput got = run_case(*my_backend, hc, mem);    // plan + run into poisoned buffers
//   HostMemory host;  auto ref = make_cpu_reference_backend();
//   RunOutput want = run_case(*ref, hc, host);         // or naive_attention(hc)
//   EXPECT_EQ(compare(got, want, tolerance_for(hc)), "");
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/attention.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/numeric.hpp"
#include "attnkit/types.hpp"

namespace attnkit::conformance {

// ---------------------------------------------------------------------------------------------
// Memory-space hook: where a backend's pointers live. Host backends use HostMemory; a GPU
// backend's tests provide an implementation backed by cudaMalloc/cudaMemcpy(Async) on the
// backend's stream. The harness builds everything on the host, then copies each buffer through
// this interface, and copies `out`/`lse` (and the cache, for write_kv checks) back.
class MemorySpace {
 public:
  virtual ~MemorySpace() = default;
  virtual std::string name() const = 0;
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void* stream() { return nullptr; }  // passed to run()/write_kv()
  virtual void synchronize() {}               // after run(), before copying results back
};

class HostMemory final : public MemorySpace {
 public:
  std::string name() const override { return "host"; }
  void* allocate(size_t bytes) override { return ::operator new(std::max<size_t>(bytes, 1)); }
  void release(void* p) override { ::operator delete(p); }
  void copy_to_device(void* dst, const void* src, size_t n) override {
    if (n) std::memcpy(dst, src, n);
  }
  void copy_to_host(void* dst, const void* src, size_t n) override {
    if (n) std::memcpy(dst, src, n);
  }
};

// An allocation in a memory space, released on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(MemorySpace& ms, size_t bytes) : ms_(&ms), bytes_(bytes), p_(ms.allocate(bytes)) {}
  DeviceBuffer(MemorySpace& ms, const void* host, size_t bytes) : DeviceBuffer(ms, bytes) {
    ms.copy_to_device(p_, host, bytes);
  }
  template <class T>
  DeviceBuffer(MemorySpace& ms, const std::vector<T>& v)
      : DeviceBuffer(ms, v.data(), v.size() * sizeof(T)) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ms_, o.ms_);
    std::swap(bytes_, o.bytes_);
    std::swap(p_, o.p_);
    return *this;
  }
  ~DeviceBuffer() {
    if (ms_ && p_) ms_->release(p_);
  }
  void* get() const { return p_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  size_t bytes() const { return bytes_; }

 private:
  MemorySpace* ms_ = nullptr;
  size_t bytes_ = 0;
  void* p_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Element codecs.

inline int act_bytes(DType d) { return d == DType::kFloat32 ? 4 : 2; }

inline double decode_act(const uint8_t* base, DType d, int64_t idx) {
  if (d == DType::kFloat32) {
    float f;
    std::memcpy(&f, base + idx * 4, 4);
    return f;
  }
  uint16_t b;
  std::memcpy(&b, base + idx * 2, 2);
  return d == DType::kFloat16 ? fp16_bits_to_float(b) : bf16_bits_to_float(b);
}

inline void encode_act(uint8_t* base, DType d, int64_t idx, float x) {
  if (d == DType::kFloat32) {
    std::memcpy(base + idx * 4, &x, 4);
    return;
  }
  uint16_t b = d == DType::kFloat16 ? float_to_fp16_bits(x) : float_to_bf16_bits(x);
  std::memcpy(base + idx * 2, &b, 2);
}

// A NaN of the activation dtype, as bytes (used to poison outputs and caches).
inline void poison_act(uint8_t* base, DType d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) encode_act(base, d, i, std::numeric_limits<float>::quiet_NaN());
}

inline bool is_quantized(KvCacheDType d) {
  return d == KvCacheDType::kFp8E4M3 || d == KvCacheDType::kFp8E5M2 || d == KvCacheDType::kNvfp4;
}

// Bytes of one stored head vector. `kAuto` means fp32 storage (fp32 models).
inline int64_t kv_row_bytes(KvCacheDType d, int n) {
  switch (d) {
    case KvCacheDType::kAuto:
      return int64_t(n) * 4;
    case KvCacheDType::kFloat16:
    case KvCacheDType::kBFloat16:
      return int64_t(n) * 2;
    case KvCacheDType::kFp8E4M3:
    case KvCacheDType::kFp8E5M2:
      return n;
    case KvCacheDType::kNvfp4:
      return (int64_t(n) + 1) / 2;
  }
  return 0;
}

// Unit roundoff of an activation dtype.
inline double unit_roundoff(DType d) {
  switch (d) {
    case DType::kFloat32:
      return std::ldexp(1.0, -24);
    case DType::kFloat16:
      return std::ldexp(1.0, -11);
    case DType::kBFloat16:
      return std::ldexp(1.0, -8);
  }
  return 1.0;
}

// Encodes one head vector into cache bytes per docs/semantics.md §2 (an independent copy of the
// rule, so write_kv implementations are checked against it) and returns the dequantized values.
// `row` is the element storage, `bscales` the nvfp4 block-scale bytes for this row (or null).
inline std::vector<double> encode_kv_row(KvCacheDType d, const float* x, int n, float scale,
                                         uint8_t* row, uint8_t* bscales) {
  std::vector<double> deq(size_t(n), 0.0);
  switch (d) {
    case KvCacheDType::kAuto:
      std::memcpy(row, x, size_t(n) * 4);
      for (int i = 0; i < n; ++i) deq[i] = x[i];
      break;
    case KvCacheDType::kFloat16:
    case KvCacheDType::kBFloat16: {
      const DType a = d == KvCacheDType::kFloat16 ? DType::kFloat16 : DType::kBFloat16;
      for (int i = 0; i < n; ++i) {
        encode_act(row, a, i, x[i]);
        deq[i] = decode_act(row, a, i);
      }
      break;
    }
    case KvCacheDType::kFp8E4M3:
      for (int i = 0; i < n; ++i) {
        row[i] = float_to_fp8_e4m3(x[i] / scale);
        deq[i] = double(fp8_e4m3_to_float(row[i])) * scale;
      }
      break;
    case KvCacheDType::kFp8E5M2:
      for (int i = 0; i < n; ++i) {
        row[i] = float_to_fp8_e5m2(x[i] / scale);
        deq[i] = double(fp8_e5m2_to_float(row[i])) * scale;
      }
      break;
    case KvCacheDType::kNvfp4:
      std::memset(row, 0, size_t(n + 1) / 2);
      for (int g0 = 0; g0 < n; g0 += 16) {
        const int g1 = std::min(n, g0 + 16);
        float amax = 0.f;
        for (int i = g0; i < g1; ++i) amax = std::max(amax, std::fabs(x[i]));
        const uint8_t bs = float_to_fp8_e4m3(amax / kE2M1Max / scale);
        bscales[g0 / 16] = bs;
        const float denom = fp8_e4m3_to_float(bs) * scale;
        for (int i = g0; i < g1; ++i) {
          const uint8_t nib = denom == 0.f ? 0 : float_to_e2m1(x[i] / denom);
          row[i / 2] |= uint8_t(i % 2 ? nib << 4 : nib);
          deq[i] = double(e2m1_to_float(nib)) * double(fp8_e4m3_to_float(bs)) * double(scale);
        }
      }
      break;
  }
  return deq;
}

// NaN (or, for e2m1 which has none, the largest value) in every element of a stored row.
inline uint8_t kv_poison_byte(KvCacheDType d) {
  switch (d) {
    case KvCacheDType::kFp8E4M3:
    case KvCacheDType::kFp8E5M2:
      return 0x7f;  // NaN in both fp8 formats
    case KvCacheDType::kNvfp4:
      return 0x77;  // +6 in both nibbles; its block scale is NaN
    default:
      return 0xff;  // 16/32-bit all-ones: NaN
  }
}

// ---------------------------------------------------------------------------------------------
// A case: everything needed to run one attention call.

struct SeqShape {
  int q_len = 1;
  int k_len = 1;
};

struct CaseConfig {
  DType dtype = DType::kBFloat16;
  KvCacheDType kv_dtype = KvCacheDType::kBFloat16;               // resolved; kAuto = fp32 storage
  ScaleGranularity scale_granularity = ScaleGranularity::kNone;  // kPerHead for per-head fp8
  int num_heads = 4;
  int num_kv_heads = 1;
  int head_size = 64;
  int head_size_v = 64;
  int block_size = 16;
  std::vector<SeqShape> seqs = {{1, 54}};
  bool causal = true;
  int window_left = -1;
  int window_right = -1;
  float softcap = 0.f;
  bool alibi = false;
  bool sinks = false;
  bool mla = false;        // V is the leading head_size_v elements of the K row (v == nullptr)
  bool mm_prefix = false;  // PrefixLM ranges per sequence (mm_prefix_ranges_for)
  int attention_chunk_size = 0;  // chunked local attention (0 = off)
  float q_gain = 1.f;            // multiplies q: pushes logits past a softcap
  bool shuffle_blocks = true;    // false: blocks in order (the "contiguous" layout)
  bool padded_strides = true;    // q/out/cache strides larger than packed
  bool with_lse = true;          // false: run with lse == nullptr (the output is still checked)
  // Added to the batch's max_seqlen_q / max_seqlen_k: upper bounds are all the API asks for (a
  // CUDA-graph batch may pass the model's longest), so a backend must not size reads by them.
  int extra_max_seqlen_q = 0, extra_max_seqlen_k = 0;
  uint64_t seed = 1;
  int longest_kv() const {
    int n = 0;
    for (auto& s : seqs) n = std::max(n, s.k_len);
    return n;
  }
  std::string describe() const {
    std::ostringstream o;
    o << to_string(dtype)
      << "/kv:" << (kv_dtype == KvCacheDType::kAuto ? "fp32" : to_string(kv_dtype))
      << (scale_granularity == ScaleGranularity::kPerHead ? "(per-head)" : "") << " h" << num_heads
      << "/" << num_kv_heads << " d" << head_size << "/" << head_size_v << " bs" << block_size
      << (causal ? " causal" : " non-causal");
    if (window_left >= 0 || window_right >= 0)
      o << " win(" << window_left << "," << window_right << ")";
    if (softcap > 0) o << " softcap" << softcap;
    if (alibi) o << " alibi";
    if (sinks) o << " sinks";
    if (mla) o << " mla";
    if (mm_prefix) o << " mm-prefix";
    if (attention_chunk_size > 0) o << " chunk" << attention_chunk_size;
    if (!with_lse) o << " no-lse";
    if (q_gain != 1.f) o << " q-gain" << q_gain;
    if (extra_max_seqlen_q || extra_max_seqlen_k)
      o << " max_seqlen+" << extra_max_seqlen_q << "/+" << extra_max_seqlen_k;
    o << " seqs[";
    for (size_t i = 0; i < seqs.size(); ++i)
      o << (i ? "," : "") << seqs[i].q_len << "x" << seqs[i].k_len;
    o << "] seed " << seed;
    return o.str();
  }
};

struct HostCase {
  CaseConfig cfg;
  int total_q = 0;
  float scale = 0.f;
  // q in the model dtype with (possibly padded) element strides.
  std::vector<uint8_t> q;
  int64_t q_stride_token = 0, q_stride_head = 0;
  int64_t out_stride_token = 0, out_stride_head = 0, out_elems = 0;
  // Paged cache (HND) and its metadata.
  int num_blocks = 0;
  int64_t stride_block = 0, stride_head = 0, stride_token = 0;
  int64_t v_stride_block = 0, v_stride_head = 0, v_stride_token = 0;
  int64_t sb_block = 0, sb_head = 0, sb_token = 0;        // nvfp4 block scales: K's
  int64_t v_sb_block = 0, v_sb_head = 0, v_sb_token = 0;  // and V's
  std::vector<uint8_t> k_cache, v_cache, k_bscales, v_bscales;
  std::vector<float> k_scale, v_scale, alibi, sinks;
  std::vector<int32_t> cu_seqlens_q, seqused_k, block_table;
  int block_table_stride = 0;
  std::vector<int32_t> mm_offsets, mm_ranges;  // PrefixLM ranges (cfg.mm_prefix), CSR form
  // Logical (dequantized) values, for the naive oracle: qd[t][h][d], kd[s][g][j][d], vd[...][e].
  std::vector<double> qd;
  std::vector<std::vector<double>> kd, vd;  // per sequence: [g][j][d]

  // Arguments with host pointers (valid while this object is alive and unmoved).
  AttentionBatch batch() const {
    AttentionBatch b;
    b.num_seqs = int(cfg.seqs.size());
    b.total_q = total_q;
    for (auto& s : cfg.seqs) {
      b.max_seqlen_q = std::max(b.max_seqlen_q, s.q_len);
      b.max_seqlen_k = std::max(b.max_seqlen_k, s.k_len);
    }
    b.max_seqlen_q += cfg.extra_max_seqlen_q;
    b.max_seqlen_k += cfg.extra_max_seqlen_k;
    b.cu_seqlens_q = cu_seqlens_q.data();
    b.seqused_k = seqused_k.data();
    b.block_table = block_table.data();
    b.block_table_stride = block_table_stride;
    if (cfg.mm_prefix) {
      b.mm_prefix_offsets = mm_offsets.data();
      b.mm_prefix_ranges = mm_ranges.data();
    }
    return b;
  }
  AttentionLayerParams layer() const {
    AttentionLayerParams L;
    L.num_heads = cfg.num_heads;
    L.num_kv_heads = cfg.num_kv_heads;
    L.head_size = cfg.head_size;
    L.head_size_v = cfg.head_size_v;
    L.dtype = cfg.dtype;
    L.scale = scale;
    L.causal = cfg.causal;
    L.window_left = cfg.window_left;
    L.window_right = cfg.window_right;
    L.attention_chunk_size = cfg.attention_chunk_size;
    L.logits_soft_cap = cfg.softcap;
    L.alibi_slopes = cfg.alibi ? alibi.data() : nullptr;
    L.sinks = cfg.sinks ? sinks.data() : nullptr;
    return L;
  }
  KvCacheView kv_view() const {
    KvCacheView v;
    v.k = const_cast<uint8_t*>(k_cache.data());
    v.v = cfg.mla ? nullptr : const_cast<uint8_t*>(v_cache.data());
    v.dtype = cfg.kv_dtype;
    v.num_blocks = num_blocks;
    v.block_size = cfg.block_size;
    v.num_kv_heads = cfg.num_kv_heads;
    v.head_size = cfg.head_size;
    v.head_size_v = cfg.head_size_v;
    v.stride_block = stride_block;
    v.stride_head = stride_head;
    v.stride_token = stride_token;
    v.v_stride_block = v_stride_block;
    v.v_stride_head = v_stride_head;
    v.v_stride_token = v_stride_token;
    v.scale_granularity = cfg.scale_granularity;
    if (is_quantized(cfg.kv_dtype)) {
      v.k_scale = k_scale.data();
      v.v_scale = cfg.mla ? nullptr : v_scale.data();
    }
    if (cfg.kv_dtype == KvCacheDType::kNvfp4) {
      v.k_block_scales = const_cast<uint8_t*>(k_bscales.data());
      v.v_block_scales = cfg.mla ? nullptr : const_cast<uint8_t*>(v_bscales.data());
      v.sb_block = sb_block;
      v.sb_head = sb_head;
      v.sb_token = sb_token;
      v.v_sb_block = v_sb_block;
      v.v_sb_head = v_sb_head;
      v.v_sb_token = v_sb_token;
    }
    return v;
  }
  int64_t out_bytes() const { return out_elems * act_bytes(cfg.dtype); }
};

inline ScaleGranularity default_granularity(KvCacheDType d) {
  if (d == KvCacheDType::kNvfp4) return ScaleGranularity::kPerBlock16;
  if (is_quantized(d)) return ScaleGranularity::kPerTensor;
  return ScaleGranularity::kNone;
}

// Builds a case. Logical values come from `seed` alone, in a fixed order that does not depend on
// the block size or the layout, so two configs differing only in paging hold the same data.

// Softmax scale multiplier of a case: 1.2 .. 1.5, varied by seed.
inline double scale_factor(uint64_t seed) { return 1.2 + 0.05 * double(seed % 7); }
// K/V magnitude of KV head g: distinct per head, so per-head scales differ by up to 2.3x and a
// backend that applies head 0's scale to every head fails.
inline float head_gain(int g) { return 0.6f + 0.25f * float(g % 7); }

// PrefixLM ranges of a sequence: one that ends among its queries (the first half of them then
// sees keys after their own positions; a single query's range reaches back past any window), and
// one further back where the cache has room (two ranges in one sequence). Sorted, disjoint,
// within [0, k_len).
inline std::vector<std::pair<int, int>> mm_prefix_ranges_for(const SeqShape& s) {
  std::vector<std::pair<int, int>> r;
  if (s.k_len == 0) return r;
  const int p0 = s.k_len - s.q_len;  // the first query's position
  const int start = std::max(0, p0 - 3);
  const int end = s.q_len > 1 ? std::min(s.k_len, p0 + (s.q_len + 1) / 2 + 1) : s.k_len;
  if (start >= 14) r.push_back({2, 2 + std::min(9, start - 4)});
  if (end > start) r.push_back({start, end});
  return r;
}

inline HostCase build_case(const CaseConfig& cfg_in) {
  HostCase c;
  c.cfg = cfg_in;
  CaseConfig& cfg = c.cfg;
  if (cfg.scale_granularity == ScaleGranularity::kNone)
    cfg.scale_granularity = default_granularity(cfg.kv_dtype);
  const int Hq = cfg.num_heads, Hkv = cfg.num_kv_heads, D = cfg.head_size, Dv = cfg.head_size_v;
  const int S = int(cfg.seqs.size());
  std::mt19937_64 rng(cfg.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  // Never exactly 1/sqrt(D): a backend that derives the scale from the head size instead of
  // reading layer.scale must fail (MLA's real scale is 1/sqrt(192), not 1/sqrt(576)).
  c.scale = float(scale_factor(cfg.seed) / std::sqrt(double(D)));

  // Queries.
  c.cu_seqlens_q.assign(size_t(S) + 1, 0);
  for (int s = 0; s < S; ++s) c.cu_seqlens_q[s + 1] = c.cu_seqlens_q[s] + cfg.seqs[s].q_len;
  c.total_q = c.cu_seqlens_q[S];
  const int pad_h = cfg.padded_strides ? 8 : 0, pad_t = cfg.padded_strides ? 16 : 0;
  c.q_stride_head = D + pad_h;
  c.q_stride_token = Hq * c.q_stride_head + pad_t;
  c.q.assign(size_t(std::max<int64_t>(1, c.total_q * c.q_stride_token)) * act_bytes(cfg.dtype), 0);
  poison_act(c.q.data(), cfg.dtype, int64_t(c.q.size()) / act_bytes(cfg.dtype));
  c.qd.assign(size_t(c.total_q) * Hq * D, 0.0);
  for (int t = 0; t < c.total_q; ++t)
    for (int h = 0; h < Hq; ++h)
      for (int d = 0; d < D; ++d) {
        const int64_t idx = t * c.q_stride_token + h * c.q_stride_head + d;
        encode_act(c.q.data(), cfg.dtype, idx, normal(rng) * cfg.q_gain);
        c.qd[(size_t(t) * Hq + h) * D + d] = decode_act(c.q.data(), cfg.dtype, idx);
      }
  c.out_stride_head = Dv + pad_h;
  c.out_stride_token = Hq * c.out_stride_head + pad_t;
  c.out_elems = std::max<int64_t>(1, c.total_q * c.out_stride_token);

  // Raw keys/values, per sequence [g][j][d].
  std::vector<std::vector<float>> kraw(S), vraw(S);
  float kamax = 0.f, vamax = 0.f;
  std::vector<float> kamax_h(Hkv, 0.f), vamax_h(Hkv, 0.f);
  for (int s = 0; s < S; ++s) {
    const int L = cfg.seqs[s].k_len;
    kraw[s].resize(size_t(Hkv) * L * D);
    for (size_t i = 0; i < kraw[s].size(); ++i) {
      const int g = int(i / (size_t(L) * D));
      kraw[s][i] = normal(rng) * head_gain(g);
      kamax_h[g] = std::max(kamax_h[g], std::fabs(kraw[s][i]));
    }
    if (!cfg.mla) {
      vraw[s].resize(size_t(Hkv) * L * Dv);
      for (size_t i = 0; i < vraw[s].size(); ++i) {
        const int g = int(i / (size_t(L) * Dv));
        vraw[s][i] = normal(rng) * head_gain(g);
        vamax_h[g] = std::max(vamax_h[g], std::fabs(vraw[s][i]));
      }
    }
  }
  for (int g = 0; g < Hkv; ++g) {
    kamax = std::max(kamax, kamax_h[g]);
    vamax = std::max(vamax, vamax_h[g]);
  }
  // Feature inputs (after the data so they never perturb it).
  c.alibi.resize(size_t(Hq));
  for (int h = 0; h < Hq; ++h) c.alibi[h] = float(std::exp2(-8.0 * (h + 1) / Hq));
  c.sinks.resize(size_t(Hq));
  for (int h = 0; h < Hq; ++h) c.sinks[h] = 2.f + 3.f * normal(rng);  // large, both signs

  // Scales: fp8 maps amax to about half the format range; nvfp4 uses the standard global scale.
  auto fp8_target = [&](float amax) {
    const float fmax = cfg.kv_dtype == KvCacheDType::kFp8E4M3 ? kFp8E4M3Max : kFp8E5M2Max;
    return std::max(amax, 1e-3f) / (0.45f * fmax);
  };
  const bool per_head = cfg.scale_granularity == ScaleGranularity::kPerHead;
  const int nscales = per_head ? Hkv : 1;
  c.k_scale.assign(size_t(nscales), 1.f);
  c.v_scale.assign(size_t(nscales), 1.f);
  for (int i = 0; i < nscales; ++i) {
    const float ka = per_head ? kamax_h[i] : kamax, va = per_head ? vamax_h[i] : vamax;
    if (cfg.kv_dtype == KvCacheDType::kNvfp4) {
      c.k_scale[i] = std::max(ka, 1e-3f) / (kE2M1Max * kFp8E4M3Max);
      c.v_scale[i] = std::max(va, 1e-3f) / (kE2M1Max * kFp8E4M3Max);
    } else if (is_quantized(cfg.kv_dtype)) {
      c.k_scale[i] = fp8_target(ka);
      c.v_scale[i] = fp8_target(va);
    }
  }

  // Layout: blocks per sequence, shuffled physical ids, spare blocks left poisoned.
  std::mt19937_64 lrng(cfg.seed ^ 0x9e3779b97f4a7c15ull);
  const int bs = cfg.block_size;
  std::vector<int> nblk(S);
  int used = 0, widest = 1;
  for (int s = 0; s < S; ++s) {
    nblk[s] = (cfg.seqs[s].k_len + bs - 1) / bs;
    used += nblk[s];
    widest = std::max(widest, nblk[s]);
  }
  c.num_blocks = used + (cfg.shuffle_blocks ? 3 : 1);
  std::vector<int32_t> ids(size_t(c.num_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  if (cfg.shuffle_blocks) std::shuffle(ids.begin(), ids.end(), lrng);
  c.block_table_stride = widest + 1;  // one extra column of garbage per row
  c.block_table.assign(size_t(S) * c.block_table_stride, 0);
  int next = 0;
  for (int s = 0; s < S; ++s)
    for (int col = 0; col < c.block_table_stride; ++col)
      c.block_table[size_t(s) * c.block_table_stride + col] =
          col < nblk[s] ? ids[size_t(next++)] : ((s + col) % 2 ? -1 : (1 << 30));

  const int64_t krow = kv_row_bytes(cfg.kv_dtype, D), vrow = kv_row_bytes(cfg.kv_dtype, Dv);
  const int64_t tpad = cfg.padded_strides ? 16 : 0;
  c.stride_token = krow + tpad;
  c.stride_head = c.stride_token * bs;
  c.stride_block = c.stride_head * Hkv;
  c.v_stride_token = vrow + tpad;
  c.v_stride_head = c.v_stride_token * bs;
  c.v_stride_block = c.v_stride_head * Hkv;
  c.k_cache.assign(size_t(c.stride_block * c.num_blocks), kv_poison_byte(cfg.kv_dtype));
  if (!cfg.mla)
    c.v_cache.assign(size_t(c.v_stride_block * c.num_blocks), kv_poison_byte(cfg.kv_dtype));
  if (cfg.kv_dtype == KvCacheDType::kNvfp4) {
    // K's and V's scale rows padded unlike each other (where strides are padded), so that V's
    // scales read through K's strides land on poison.
    c.sb_token = (D + 15) / 16 + (cfg.padded_strides ? 1 : 0);
    c.sb_head = c.sb_token * bs;
    c.sb_block = c.sb_head * Hkv;
    c.k_bscales.assign(size_t(c.sb_block * c.num_blocks), 0x7f);  // e4m3 NaN
    if (!cfg.mla) {
      c.v_sb_token = (Dv + 15) / 16 + (cfg.padded_strides ? 3 : 0);
      c.v_sb_head = c.v_sb_token * bs;
      c.v_sb_block = c.v_sb_head * Hkv;
      c.v_bscales.assign(size_t(c.v_sb_block * c.num_blocks), 0x7f);
    }
  }
  c.kd.resize(S);
  c.vd.resize(S);
  for (int s = 0; s < S; ++s) {
    const int L = cfg.seqs[s].k_len;
    c.kd[s].assign(size_t(Hkv) * L * D, 0.0);
    c.vd[s].assign(size_t(Hkv) * L * Dv, 0.0);
    for (int g = 0; g < Hkv; ++g)
      for (int j = 0; j < L; ++j) {
        const int64_t blk = c.block_table[size_t(s) * c.block_table_stride + j / bs];
        const int o = j % bs;
        const size_t base_k = (size_t(g) * L + j) * D, base_v = (size_t(g) * L + j) * Dv;
        uint8_t* kr =
            c.k_cache.data() + blk * c.stride_block + g * c.stride_head + o * c.stride_token;
        uint8_t* kb = cfg.kv_dtype == KvCacheDType::kNvfp4
                          ? c.k_bscales.data() + blk * c.sb_block + g * c.sb_head + o * c.sb_token
                          : nullptr;
        auto kq =
            encode_kv_row(cfg.kv_dtype, &kraw[s][base_k], D, c.k_scale[per_head ? g : 0], kr, kb);
        std::copy(kq.begin(), kq.end(), c.kd[s].begin() + base_k);
        if (cfg.mla) {
          std::copy(kq.begin(), kq.begin() + Dv, c.vd[s].begin() + base_v);
          continue;
        }
        uint8_t* vr =
            c.v_cache.data() + blk * c.v_stride_block + g * c.v_stride_head + o * c.v_stride_token;
        uint8_t* vb =
            cfg.kv_dtype == KvCacheDType::kNvfp4
                ? c.v_bscales.data() + blk * c.v_sb_block + g * c.v_sb_head + o * c.v_sb_token
                : nullptr;
        auto vq =
            encode_kv_row(cfg.kv_dtype, &vraw[s][base_v], Dv, c.v_scale[per_head ? g : 0], vr, vb);
        std::copy(vq.begin(), vq.end(), c.vd[s].begin() + base_v);
      }
  }
  c.seqused_k.resize(size_t(S));
  for (int s = 0; s < S; ++s) c.seqused_k[s] = cfg.seqs[s].k_len;
  c.mm_offsets.assign(1, 0);
  c.mm_ranges.clear();
  for (int s = 0; cfg.mm_prefix && s < S; ++s) {
    for (auto [a, b] : mm_prefix_ranges_for(cfg.seqs[s]))
      c.mm_ranges.insert(c.mm_ranges.end(), {a, b});
    c.mm_offsets.push_back(int32_t(c.mm_ranges.size() / 2));
  }
  if (c.mm_ranges.empty()) c.mm_ranges.assign(2, 0);  // a valid pointer with no range in use
  return c;
}

// A case restricted to one of its sequences, over the very same cache (batch-invariance checks).
inline HostCase single_sequence(const HostCase& c, int s) {
  HostCase r = c;
  const int q0 = c.cu_seqlens_q[s], q_len = c.cu_seqlens_q[s + 1] - q0;
  r.cfg.seqs = {c.cfg.seqs[s]};
  r.total_q = q_len;
  r.cu_seqlens_q = {0, q_len};
  r.seqused_k = {c.seqused_k[s]};
  r.block_table.assign(c.block_table.begin() + int64_t(s) * c.block_table_stride,
                       c.block_table.begin() + int64_t(s + 1) * c.block_table_stride);
  if (c.cfg.mm_prefix) {
    r.mm_ranges.assign(c.mm_ranges.begin() + 2 * c.mm_offsets[s],
                       c.mm_ranges.begin() + 2 * c.mm_offsets[s + 1]);
    r.mm_offsets = {0, c.mm_offsets[s + 1] - c.mm_offsets[s]};
    if (r.mm_ranges.empty()) r.mm_ranges.assign(2, 0);
  }
  const int ab = act_bytes(c.cfg.dtype);
  r.q.assign(c.q.begin() + q0 * c.q_stride_token * ab,
             c.q.begin() + (q0 + q_len) * c.q_stride_token * ab);
  if (r.q.empty()) r.q.assign(size_t(ab), 0);
  const int Hq = c.cfg.num_heads, D = c.cfg.head_size;
  r.qd.assign(c.qd.begin() + int64_t(q0) * Hq * D, c.qd.begin() + int64_t(q0 + q_len) * Hq * D);
  r.kd = {c.kd[s]};
  r.vd = {c.vd[s]};
  r.out_elems = std::max<int64_t>(1, q_len * c.out_stride_token);
  return r;
}

// The same case with its cache in the cu_seqlens_k form (encoder self-attention): each
// sequence's rows gathered from the pages into contiguous [total_k, heads, dim] rows, read
// through contiguous_kv_view's description (block table = cu_seqlens_k, one block per sequence).
inline HostCase contiguous_form(const HostCase& c) {
  HostCase r = c;
  const int n = int(c.cfg.seqs.size()), H = c.cfg.num_kv_heads;
  std::vector<int32_t> cu_k(size_t(n) + 1, 0);
  int longest = 1;
  for (int s = 0; s < n; ++s) {
    cu_k[size_t(s) + 1] = cu_k[size_t(s)] + c.seqused_k[size_t(s)];
    longest = std::max(longest, int(c.seqused_k[size_t(s)]));
  }
  const KvCacheView v = contiguous_kv_view(c.cfg.kv_dtype, c.cfg.dtype, cu_k[size_t(n)], H,
                                           c.cfg.head_size, c.cfg.head_size_v, longest);
  const int64_t kd = kv_bytes_per_head_vector(c.cfg.kv_dtype, c.cfg.dtype, c.cfg.head_size);
  const int64_t vd = kv_bytes_per_head_vector(c.cfg.kv_dtype, c.cfg.dtype, c.cfg.head_size_v);
  const int64_t gb = kv_block_scale_bytes_per_head_vector(c.cfg.kv_dtype, c.cfg.head_size);
  const int64_t gv = kv_block_scale_bytes_per_head_vector(c.cfg.kv_dtype, c.cfg.head_size_v);
  const int64_t rows = v.num_blocks;
  r.k_cache.assign(size_t(rows * v.stride_token), 0);
  r.v_cache.assign(c.cfg.mla ? 0 : size_t(rows * v.v_stride_token), 0);
  if (gb) {
    r.k_bscales.assign(size_t(rows * v.sb_token), 0);
    r.v_bscales.assign(c.cfg.mla ? 0 : size_t(rows * v.v_sb_token), 0);
  }
  for (int s = 0; s < n; ++s)
    for (int j = 0; j < c.seqused_k[size_t(s)]; ++j) {
      const int64_t b =
          c.block_table[size_t(s) * size_t(c.block_table_stride) + size_t(j / c.cfg.block_size)];
      const int64_t o = j % c.cfg.block_size, row = cu_k[size_t(s)] + j;
      for (int g = 0; g < H; ++g) {
        auto copy = [](std::vector<uint8_t>& dst, int64_t at, const std::vector<uint8_t>& src,
                       int64_t from, int64_t bytes) {
          std::memcpy(dst.data() + at, src.data() + from, size_t(bytes));
        };
        copy(r.k_cache, row * v.stride_token + g * v.stride_head, c.k_cache,
             b * c.stride_block + g * c.stride_head + o * c.stride_token, kd);
        if (!c.cfg.mla)
          copy(r.v_cache, row * v.v_stride_token + g * v.v_stride_head, c.v_cache,
               b * c.v_stride_block + g * c.v_stride_head + o * c.v_stride_token, vd);
        if (gb) {
          copy(r.k_bscales, row * v.sb_token + g * v.sb_head, c.k_bscales,
               b * c.sb_block + g * c.sb_head + o * c.sb_token, gb);
          if (!c.cfg.mla)
            copy(r.v_bscales, row * v.v_sb_token + g * v.v_sb_head, c.v_bscales,
                 b * c.v_sb_block + g * c.v_sb_head + o * c.v_sb_token, gv);
        }
      }
    }
  if (r.v_cache.empty() && !c.cfg.mla) r.v_cache.assign(1, 0);
  r.cfg.block_size = v.block_size;
  r.num_blocks = v.num_blocks;
  r.stride_block = v.stride_block;
  r.stride_head = v.stride_head;
  r.stride_token = v.stride_token;
  r.v_stride_block = v.v_stride_block;
  r.v_stride_head = v.v_stride_head;
  r.v_stride_token = v.v_stride_token;
  r.sb_block = v.sb_block;
  r.sb_head = v.sb_head;
  r.sb_token = v.sb_token;
  r.v_sb_block = v.v_sb_block;
  r.v_sb_head = v.v_sb_head;
  r.v_sb_token = v.v_sb_token;
  r.block_table.assign(cu_k.begin(), cu_k.end() - 1);
  if (r.block_table.empty()) r.block_table.assign(1, 0);
  r.block_table_stride = 1;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Results.

struct RunOutput {
  int total_q = 0, num_heads = 0, head_size_v = 0;
  std::vector<double> out;      // [total_q][num_heads][head_size_v]
  std::vector<double> lse;      // [total_q][num_heads]; empty when run with lse == nullptr
  int64_t written_outside = 0;  // poisoned padding bytes of `out` that changed (must be 0)
  double at(int t, int h, int e) const {
    return out[(size_t(t) * num_heads + h) * head_size_v + e];
  }
};

// A case's KV cache (elements, fp8 scales, nvfp4 block scales) uploaded to memory space `ms`,
// and its view pointing there.
struct DeviceKvCache {
  DeviceBuffer k, v, kb, vb, ks, vs;
  KvCacheView view;
  DeviceKvCache(MemorySpace& ms, const HostCase& c) {
    auto nonempty = [](const std::vector<uint8_t>& b) {
      return b.empty() ? std::vector<uint8_t>(1) : b;
    };
    k = DeviceBuffer(ms, c.k_cache);
    v = DeviceBuffer(ms, nonempty(c.v_cache));
    kb = DeviceBuffer(ms, nonempty(c.k_bscales));
    vb = DeviceBuffer(ms, nonempty(c.v_bscales));
    ks = DeviceBuffer(ms, c.k_scale);
    vs = DeviceBuffer(ms, c.v_scale);
    view = c.kv_view();
    view.k = k.get();
    if (view.v) view.v = v.get();
    if (view.k_scale) view.k_scale = ks.as<float>();
    if (view.v_scale) view.v_scale = vs.as<float>();
    if (view.k_block_scales) view.k_block_scales = kb.as<uint8_t>();
    if (view.v_block_scales) view.v_block_scales = vb.as<uint8_t>();
  }
};

// Runs `backend` on the case in memory space `ms`: uploads every input, plan() on host metadata,
// run() into a NaN-poisoned strided `out` and a NaN-poisoned `lse` (or lse == nullptr when the
// case says so), downloads both.
inline RunOutput run_case(AttentionBackend& backend, const HostCase& c, MemorySpace& ms) {
  const int Hq = c.cfg.num_heads, Dv = c.cfg.head_size_v;
  const int ab = act_bytes(c.cfg.dtype);
  std::vector<uint8_t> out_host(size_t(c.out_bytes()));
  poison_act(out_host.data(), c.cfg.dtype, c.out_elems);
  std::vector<float> lse_host(size_t(std::max(1, c.total_q * Hq)),
                              std::numeric_limits<float>::quiet_NaN());
  DeviceBuffer q(ms, c.q), out(ms, out_host), lse(ms, lse_host);
  const DeviceKvCache cache(ms, c);
  DeviceBuffer al(ms, c.alibi), sk(ms, c.sinks);
  DeviceBuffer cu(ms, c.cu_seqlens_q), su(ms, c.seqused_k), bt(ms, c.block_table);
  DeviceBuffer mo(ms, c.mm_offsets), mr(ms, c.mm_ranges);

  AttentionArgs a;
  a.q = q.get();
  a.q_stride_token = c.q_stride_token;
  a.q_stride_head = c.q_stride_head;
  a.out = out.get();
  a.out_stride_token = c.out_stride_token;
  a.out_stride_head = c.out_stride_head;
  a.lse = c.cfg.with_lse ? lse.as<float>() : nullptr;
  a.kv = cache.view;
  a.layer = c.layer();
  if (a.layer.alibi_slopes) a.layer.alibi_slopes = al.as<float>();
  if (a.layer.sinks) a.layer.sinks = sk.as<float>();
  const AttentionBatch host_batch = c.batch();
  a.batch = host_batch;
  a.batch.cu_seqlens_q = cu.as<int32_t>();
  a.batch.seqused_k = su.as<int32_t>();
  a.batch.block_table = bt.as<int32_t>();
  if (c.cfg.mm_prefix) {
    a.batch.mm_prefix_offsets = mo.as<int32_t>();
    a.batch.mm_prefix_ranges = mr.as<int32_t>();
  }

  AttentionLayerParams host_layer = c.layer();  // host copies for plan()
  backend.plan(host_batch, host_layer);
  DeviceBuffer ws(ms, std::max<size_t>(backend.workspace_bytes(), 1));
  a.workspace = ws.get();
  backend.run(a, ms.stream());
  ms.synchronize();
  ms.copy_to_host(out_host.data(), out.get(), out_host.size());
  ms.copy_to_host(lse_host.data(), lse.get(), lse_host.size() * sizeof(float));

  RunOutput r;
  r.total_q = c.total_q;
  r.num_heads = Hq;
  r.head_size_v = Dv;
  r.out.resize(size_t(c.total_q) * Hq * Dv);
  if (c.cfg.with_lse) r.lse.resize(size_t(c.total_q) * Hq);
  std::vector<uint8_t> poison(static_cast<size_t>(ab));
  poison_act(poison.data(), c.cfg.dtype, 1);
  std::vector<char> inside(size_t(c.out_elems), 0);
  for (int t = 0; t < c.total_q; ++t)
    for (int h = 0; h < Hq; ++h) {
      for (int e = 0; e < Dv; ++e) {
        const int64_t idx = t * c.out_stride_token + h * c.out_stride_head + e;
        inside[size_t(idx)] = 1;
        r.out[(size_t(t) * Hq + h) * Dv + e] = decode_act(out_host.data(), c.cfg.dtype, idx);
      }
      if (c.cfg.with_lse) r.lse[size_t(t) * Hq + h] = lse_host[size_t(t) * Hq + h];
    }
  for (int64_t i = 0; i < c.out_elems; ++i)
    if (!inside[size_t(i)] && std::memcmp(out_host.data() + i * ab, poison.data(), size_t(ab)) != 0)
      ++r.written_outside;
  return r;
}

// The independent naive oracle: from the logical (dequantized) values, one score vector over all
// keys with -inf where masked, the sink appended as one more column, softmax, the sink column
// dropped (the Hugging Face formulation). Shares no code with CPU_REFERENCE.
inline RunOutput naive_attention(const HostCase& c) {
  const CaseConfig& f = c.cfg;
  const int Hq = f.num_heads, Hkv = f.num_kv_heads, D = f.head_size, Dv = f.head_size_v;
  const double ninf = -std::numeric_limits<double>::infinity();
  RunOutput r;
  r.total_q = c.total_q;
  r.num_heads = Hq;
  r.head_size_v = Dv;
  r.out.assign(size_t(c.total_q) * Hq * Dv, 0.0);
  r.lse.assign(size_t(c.total_q) * Hq, ninf);
  for (size_t s = 0; s < f.seqs.size(); ++s) {
    const int q_len = f.seqs[s].q_len, L = f.seqs[s].k_len;
    for (int i = 0; i < q_len; ++i) {
      const int t = c.cu_seqlens_q[s] + i;
      const long pos = long(L) - q_len + i;
      long mm_lo = 1, mm_hi = 0;  // the PrefixLM range holding pos (none: empty)
      for (int r = f.mm_prefix ? c.mm_offsets[s] : 0; f.mm_prefix && r < c.mm_offsets[s + 1]; ++r)
        if (pos >= c.mm_ranges[2 * r] && pos < c.mm_ranges[2 * r + 1])
          mm_lo = c.mm_ranges[2 * r], mm_hi = c.mm_ranges[2 * r + 1] - 1;
      for (int h = 0; h < Hq; ++h) {
        const int g = h / (Hq / Hkv);
        std::vector<double> logit(size_t(L) + 1, ninf);
        for (int j = 0; j < L; ++j) {
          const int C = f.attention_chunk_size;
          const bool visible =
              (((!f.causal || j <= pos) && (f.window_left < 0 || pos - j <= f.window_left) &&
                (f.window_right < 0 || j - pos <= f.window_right)) ||
               (j >= mm_lo && j <= mm_hi)) &&
              (C == 0 || std::floor(double(j) / C) == std::floor(double(pos) / C));
          if (!visible) continue;
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += c.qd[(size_t(t) * Hq + h) * D + d] * c.kd[s][(size_t(g) * L + j) * D + d];
          double x = double(c.scale) * dot;
          if (f.softcap > 0) x = double(f.softcap) * std::tanh(x / double(f.softcap));
          if (f.alibi) x += double(c.alibi[h]) * (j <= pos ? double(j - pos) : double(pos - j));
          logit[j] = x;
        }
        if (f.sinks) logit[L] = c.sinks[h];
        const double mx = *std::max_element(logit.begin(), logit.end());
        if (mx == ninf) continue;  // empty row: out 0, lse -inf
        double z = 0;
        for (double x : logit) z += std::exp(x - mx);
        r.lse[size_t(t) * Hq + h] = mx + std::log(z);
        for (int j = 0; j < L; ++j) {
          if (logit[j] == ninf) continue;
          const double p = std::exp(logit[j] - mx) / z;
          for (int e = 0; e < Dv; ++e)
            r.out[(size_t(t) * Hq + h) * Dv + e] += p * c.vd[s][(size_t(g) * L + j) * Dv + e];
        }
      }
    }
  }
  // The output is stored in the model dtype: round the oracle the same way (once).
  std::vector<uint8_t> tmp(size_t(act_bytes(f.dtype)));
  for (double& x : r.out) {
    encode_act(tmp.data(), f.dtype, 0, float(x));
    x = decode_act(tmp.data(), f.dtype, 0);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Tolerances.
//
// out: |got - want| <= atol + rtol * |want| per element, with u the unit roundoff of the model
// dtype (fp32 2^-24, fp16 2^-11, bf16 2^-8), u32 = 2^-24, D = head_size, n_k = the longest kv_len,
// rms_v the RMS of the (dequantized) V values (at least 0.1, so tiny-V caches are not held to a
// vanishing bound) and g the logit gain (q_gain times the case's scale factor, x1.5 with a
// softcap, as FlashAttention widens its bound from 2x to 3x there):
//   atol = factor * rms_v * g * (6 * u + 8 * (sqrt(D) + sqrt(n_k)) * u32)     rtol = 2 * u
// The first term covers rounding the operands (P, dequantized K/V, q*scale) to the model dtype
// once (FlashAttention's "2x the low-precision reference" in closed form; 6u*rms = 0.023 for
// bf16, the magnitude vLLM's 1.5e-2 atol allows; g stays on it: without g the CPU backends hold,
// but session 51's GPU logs, rescaled, put a gain-12 CUDA_FLASH_v2 layer at ~1.03); the second
// covers fp32 accumulation, growing as a random walk: of the q.k dot products (length D: ~ sqrt(D)
// u32 times the logit, and the logits that carry a row's weight are its largest, up to ~4g: sqrt(2
// ln n_k) deviations) and of the P.V sums (length n_k), doubled for the worst of a case's up to
// ~10^6 output elements (V values a few deviations out). It dominates for fp32 models. rtol covers
// the final rounding of the output. lse: the same bound for every model dtype, since the LSE never
// passes through the model dtype (q and the dequantized K reach fp32 within one rounding; P is
// rounded to the model dtype only on its way to the P.V product), with n = max(D, n_k):
//   |got - want| <= factor * u32 * (16 + 4 * g * sqrt(D) + 2 * sqrt(n) + 4 * (1 + |want|))
// A row's largest logits (|x| up to ~4g) carry the rounding of their fp32 partial sums,
// ~ sqrt(D) |x| u32; the denominator sums n_k exp() values (a random walk of 2 sqrt(n) u32); 16 u32
// covers the exp/log evaluations and 4 (1 + |lse|) u32 the final roundings (a log2 and a multiply
// on GPUs). Both terms were written for a typical logit and element (2g; 4 sqrt(max(D, n_k)) for
// out) until the randomized test (fuzz_test.cpp) drew fp32 layers past them: about one fp32 layer
// in 400, by up to 17%, on every CPU_FLASH ISA (bench/NOTES.md, session 50).
// Rows whose reference LSE is -inf must be -inf exactly. NaN never passes. `factor` is 1 unless a
// backend entry states otherwise.
struct Tolerance {
  double atol = 0, rtol = 0, lse_atol = 0, lse_rtol = 0;
};

inline double rms_v(const HostCase& c) {
  double s = 0;
  size_t n = 0;
  for (auto& v : c.vd) {
    for (double x : v) s += x * x;
    n += v.size();
  }
  return n ? std::sqrt(s / double(n)) : 1.0;
}

inline Tolerance tolerance_for(const HostCase& c, double factor = 1.0) {
  const double u = unit_roundoff(c.cfg.dtype), u32 = std::ldexp(1.0, -24);
  const int n_k = c.cfg.longest_kv();
  const int n = std::max(c.cfg.head_size, n_k);
  const double D = c.cfg.head_size;
  const double g = std::max(1.0, double(c.cfg.q_gain)) * scale_factor(c.cfg.seed) *
                   (c.cfg.softcap > 0 ? 1.5 : 1.0);
  Tolerance t;
  t.atol = factor * std::max(rms_v(c), 0.1) * g *
           (6 * u + 8 * (std::sqrt(D) + std::sqrt(double(n_k))) * u32);
  t.rtol = 2 * u;
  t.lse_atol = factor * u32 * (16 + 4 * g * std::sqrt(D) + 2 * std::sqrt(double(n)));
  t.lse_rtol = factor * 4 * u32;
  return t;
}

// Two fp64 implementations compute bit-identical logits and denominators (the same loops in the
// same order); they differ in how the output sum is formed (p = e / z per key, against
// (sum e v) / z). Each of those fp64 sums lies within (n_k + 3) u64 sum|p v| <= (n_k + 3) u64
// max|v| of the exact value (u64 = 2^-53, sum p <= 1), so they differ by at most twice that before
// the one final rounding; then by one unit in the last place of the output dtype, which below its
// smallest normal is the fixed subnormal step (fp16 2^-24: outputs of a tiny window under a large
// sink land there). The first term matters only where the output cancels: seed 20261209's case
// 1401 (fp32, sum|p v| 0.99, output 3.3e-10) differed by 1.25 u64 sum|p v|, 3.5 fp32 units.
inline Tolerance fp64_agreement(const HostCase& c) {
  const int n_k = c.cfg.longest_kv();
  double max_v = 0;
  for (auto& v : c.vd)
    for (double x : v) max_v = std::max(max_v, std::fabs(x));
  Tolerance t;
  t.rtol = 2 * unit_roundoff(c.cfg.dtype);
  t.atol = std::ldexp(1.0, c.cfg.dtype == DType::kFloat16    ? -24
                           : c.cfg.dtype == DType::kBFloat16 ? -133
                                                             : -149) +
           2 * (n_k + 3) * std::ldexp(1.0, -53) * max_v;
  t.lse_atol = 1e-9;
  t.lse_rtol = 1e-7;
  return t;
}

// Compares; returns "" when within tolerance, else a description of the worst mismatches. The
// LSE is compared when both sides have one (a run with lse == nullptr has none).
inline std::string compare(const RunOutput& got, const RunOutput& want, const Tolerance& tol) {
  std::ostringstream err;
  err.precision(9);
  int reported = 0;
  int64_t bad = 0;
  double worst = 0, worst_lse = 0;
  if (got.written_outside)
    err << got.written_outside << " elements outside the output rows were overwritten; ";
  const bool lse = !got.lse.empty() && !want.lse.empty();
  for (size_t i = 0; i < want.out.size(); ++i) {
    const double g = got.out[i], w = want.out[i], diff = std::fabs(g - w);
    if (!(diff <= tol.atol + tol.rtol * std::fabs(w))) {  // NaN fails here
      ++bad;
      worst = std::isnan(diff) ? diff : std::max(worst, diff);
      if (reported++ < 4) {
        const size_t row = i / size_t(want.head_size_v);
        err << "out[t=" << row / size_t(want.num_heads) << ",h=" << row % size_t(want.num_heads)
            << ",e=" << i % size_t(want.head_size_v) << "] got " << g << " want " << w << "; ";
      }
    }
  }
  for (size_t i = 0; lse && i < want.lse.size(); ++i) {
    const double g = got.lse[i], w = want.lse[i];
    bool ok;
    if (std::isinf(w) && w < 0)
      ok = std::isinf(g) && g < 0;
    else
      ok = std::fabs(g - w) <= tol.lse_atol + tol.lse_rtol * (1 + std::fabs(w));
    if (!ok) {
      ++bad;
      worst_lse = std::isnan(g) ? g : std::max(worst_lse, std::fabs(g - w));
      if (reported++ < 6)
        err << "lse[t=" << i / size_t(want.num_heads) << ",h=" << i % size_t(want.num_heads)
            << "] got " << g << " want " << w << "; ";
    }
  }
  if (!bad && !got.written_outside) return "";
  err << bad << " mismatches (worst |diff| " << worst << ", atol " << tol.atol << ", rtol "
      << tol.rtol;
  if (worst_lse != 0 || std::isnan(worst_lse))
    err << "; lse worst |diff| " << worst_lse << ", atol " << tol.lse_atol << ", rtol "
        << tol.lse_rtol << " x (1 + |lse|)";
  err << ")";
  return err.str();
}

// The largest error as a fraction of the allowed one (out elements only): the headroom.
inline double worst_ratio(const RunOutput& got, const RunOutput& want, const Tolerance& tol) {
  double r = 0;
  for (size_t i = 0; i < want.out.size(); ++i)
    r = std::max(
        r, std::fabs(got.out[i] - want.out[i]) / (tol.atol + tol.rtol * std::fabs(want.out[i])));
  return r;
}

inline double max_abs_diff(const RunOutput& a, const RunOutput& b) {
  double m = 0;
  for (size_t i = 0; i < a.out.size() && i < b.out.size(); ++i)
    m = std::max(m, std::fabs(a.out[i] - b.out[i]));
  return m;
}

}  // namespace attnkit::conformance
