// CPU_FLASH against a naive fp64 loop written here (docs/semantics.md), for every ISA variant
// this CPU runs: prefill and decode, split-KV, GQA/MQA, every KV dtype, masks and logit features,
// head_size_v != head_size, MLA latent decode, empty rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "../far_offsets.hpp"
#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/log.hpp"
#include "attnkit/numeric.hpp"
#include "backends/cpu_flash/cpu_flash_backend.hpp"
#include "backends/cpu_reference/cpu_reference_backend.hpp"

namespace attnkit {
namespace {

using cpu_flash::Isa;

struct Case {
  const char* name;
  DType dt = DType::kBFloat16;
  KvCacheDType kv = KvCacheDType::kBFloat16;
  ScaleGranularity gran = ScaleGranularity::kNone;
  int hq = 4, hkv = 2, d = 64, dv = 64;
  bool causal = true;
  int wl = -1, wr = -1;
  float cap = 0.f;
  bool alibi = false, sinks = false, mla = false;
  int block = 16;
  std::vector<std::pair<int, int>> seqs;  // (q_len, k_len)
  // Bytes past a 64-byte line where the K and V caches start: 16, what the heap used to hand
  // these buffers, so that rows straddle lines unless a test asks for 0.
  int cache_offset = 16;
  // The first used K block starts past this many bytes of the cache (the blocks below are mapped
  // but never touched): element and byte offsets beyond 32 bits.
  int64_t base_bytes = 0;
  // Query and output token strides that put the last token past 2^31 elements (views into larger
  // buffers, lazily mapped: only the tokens' rows are touched).
  bool far_tokens = false;
  bool lockstep = true;  // CpuFlashOptions::lockstep_heads
};

// A cache tensor filled with `fill` from byte fill_from on: a vector, or where fill_from > 0 a
// lazy mapping whose pages below it are never touched (a cache of several GiB of which a test
// writes a few blocks at the top).
class CacheBuffer {
 public:
  CacheBuffer(size_t bytes, uint8_t fill, size_t fill_from) : bytes_(bytes) {
    if (fill_from == 0) {
      vec_.assign(bytes, fill);
      data_ = vec_.data();
      return;
    }
    data_ = static_cast<uint8_t*>(far_offsets::map_lazily(bytes));
    if (!data_) throw std::bad_alloc();
    std::memset(data_ + fill_from, fill, bytes - fill_from);
  }
  ~CacheBuffer() {
    if (vec_.empty() && data_) far_offsets::unmap_lazily(data_, bytes_);
  }
  CacheBuffer(const CacheBuffer&) = delete;
  CacheBuffer& operator=(const CacheBuffer&) = delete;
  uint8_t* data() const { return data_; }

 private:
  size_t bytes_;
  std::vector<uint8_t> vec_;
  uint8_t* data_ = nullptr;
};

float round_to(DType dt, float x) {
  if (dt == DType::kBFloat16) return bf16_bits_to_float(float_to_bf16_bits(x));
  if (dt == DType::kFloat16) return fp16_bits_to_float(float_to_fp16_bits(x));
  return x;
}

void store_act(void* p, DType dt, int64_t i, float x) {
  if (dt == DType::kFloat32)
    static_cast<float*>(p)[i] = x;
  else
    static_cast<uint16_t*>(p)[i] =
        dt == DType::kFloat16 ? float_to_fp16_bits(x) : float_to_bf16_bits(x);
}
float load_act(const void* p, DType dt, int64_t i) {
  if (dt == DType::kFloat32) return static_cast<const float*>(p)[i];
  const uint16_t b = static_cast<const uint16_t*>(p)[i];
  return dt == DType::kFloat16 ? fp16_bits_to_float(b) : bf16_bits_to_float(b);
}

struct Result {
  double max_err = 0, max_lse_err = 0;
  bool finite = true;
  bool wrote_outside = false;  // far_tokens: a byte past an output row changed
  std::vector<uint8_t> out;    // the output as written
};

// oracle: run CPU_REFERENCE instead of CPU_FLASH (isa, threads and bf16_dots then unused).
Result run_case(const Case& c, Isa isa, int threads, std::optional<bool> bf16_dots = {},
                bool oracle = false) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int ns = int(c.seqs.size());
  const int hkv = c.mla ? 1 : c.hkv;
  const int esz = dtype_bytes(c.dt);
  // Cache: HND, shuffled blocks, unused slots poisoned with NaN bytes.
  std::vector<int32_t> cu{0}, used;
  int max_blocks = 0, total_blocks = 0;
  for (auto [q, k] : c.seqs) {
    cu.push_back(cu.back() + q);
    used.push_back(k);
    max_blocks = std::max(max_blocks, (k + c.block - 1) / c.block);
    total_blocks += (k + c.block - 1) / c.block;
  }
  const KvCacheDType stored = c.kv;
  const int64_t kbytes = kv_bytes_per_head_vector(stored, c.dt, c.d);
  const int64_t vbytes = kv_bytes_per_head_vector(stored, c.dt, c.dv);
  const int64_t base = c.base_bytes > 0 ? c.base_bytes / (kbytes * c.block * hkv) + 1 : 0;
  const int64_t nb = base + total_blocks + 3;
  KvCacheView kv;
  kv.dtype = stored;
  kv.num_blocks = nb;
  kv.block_size = c.block;
  kv.num_kv_heads = hkv;
  kv.head_size = c.d;
  kv.head_size_v = c.dv;
  kv.stride_token = kbytes;
  kv.stride_head = kbytes * c.block;
  kv.stride_block = kv.stride_head * hkv;
  kv.v_stride_token = vbytes;
  kv.v_stride_head = vbytes * c.block;
  kv.v_stride_block = kv.v_stride_head * hkv;
  CacheBuffer kbuf(size_t(kv.stride_block * nb + 128), 0xff, size_t(kv.stride_block * base)),
      vbuf(size_t(kv.v_stride_block * nb + 128), 0xff, size_t(kv.v_stride_block * base));
  auto at_offset = [&](const CacheBuffer& b) {
    return b.data() + (64 - reinterpret_cast<uintptr_t>(b.data()) % 64) % 64 + c.cache_offset;
  };
  kv.k = at_offset(kbuf);
  kv.v = c.mla ? nullptr : at_offset(vbuf);
  std::vector<float> kscale(static_cast<size_t>(hkv)), vscale(static_cast<size_t>(hkv));
  for (int h = 0; h < hkv; ++h) kscale[h] = 0.02f + 0.01f * h, vscale[h] = 0.03f + 0.005f * h;
  std::optional<CacheBuffer> kbs, vbs;
  kv.scale_granularity = c.gran;
  if (c.gran != ScaleGranularity::kNone) {
    kv.k_scale = kscale.data();
    kv.v_scale = c.mla ? nullptr : vscale.data();
  }
  if (stored == KvCacheDType::kNvfp4) {
    kv.sb_token = c.d / 16;
    kv.sb_head = kv.sb_token * c.block;
    kv.sb_block = kv.sb_head * hkv;
    kv.v_sb_token = c.dv / 16;
    kv.v_sb_head = kv.v_sb_token * c.block;
    kv.v_sb_block = kv.v_sb_head * hkv;
    kbs.emplace(size_t(kv.sb_block * nb), 0x7f, size_t(kv.sb_block * base));
    vbs.emplace(size_t(kv.v_sb_block * nb), 0x7f, size_t(kv.v_sb_block * base));
    kv.k_block_scales = kbs->data();
    kv.v_block_scales = c.mla ? nullptr : vbs->data();
  }
  std::vector<int32_t> perm(static_cast<size_t>(nb - base));
  std::iota(perm.begin(), perm.end(), int32_t(base));
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int32_t> table(size_t(ns) * std::max(1, max_blocks), -1);
  int next = 0;
  for (int s = 0; s < ns; ++s)
    for (int b = 0; b < (used[s] + c.block - 1) / c.block; ++b)
      table[size_t(s) * std::max(1, max_blocks) + b] = perm[size_t(next++)];
  // Write keys through write_kv_cpu, one sequence at a time.
  for (int s = 0; s < ns; ++s) {
    const int n = used[s];
    if (n == 0) continue;
    std::vector<uint8_t> k(size_t(n) * hkv * c.d * esz), v(size_t(n) * hkv * c.dv * esz);
    for (int64_t i = 0; i < int64_t(n) * hkv * c.d; ++i) store_act(k.data(), c.dt, i, nd(rng));
    for (int64_t i = 0; i < int64_t(n) * hkv * c.dv; ++i) store_act(v.data(), c.dt, i, nd(rng));
    std::vector<int64_t> slots(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j)
      slots[j] =
          int64_t(table[size_t(s) * std::max(1, max_blocks) + j / c.block]) * c.block + j % c.block;
    KvWriteArgs w;
    w.k = k.data();
    w.v = c.mla ? nullptr : v.data();
    w.dtype = c.dt;
    w.num_tokens = n;
    w.k_stride_token = int64_t(hkv) * c.d;
    w.k_stride_head = c.d;
    w.v_stride_token = int64_t(hkv) * c.dv;
    w.v_stride_head = c.dv;
    w.slot_mapping = slots.data();
    w.cache = kv;
    write_kv_cpu(w);
  }
  // Queries, outputs (poisoned), layer.
  const int total_q = cu.back();
  std::vector<uint8_t> q(size_t(total_q) * c.hq * c.d * esz),
      out(size_t(total_q) * c.hq * c.dv * esz, 0xff);
  for (int64_t i = 0; i < int64_t(total_q) * c.hq * c.d; ++i) store_act(q.data(), c.dt, i, nd(rng));
  std::vector<float> lse(size_t(total_q) * c.hq, 12345.f), slopes(static_cast<size_t>(c.hq)),
      sinks(static_cast<size_t>(c.hq));
  for (int h = 0; h < c.hq; ++h) slopes[h] = std::exp2(-1.f - h), sinks[h] = 0.5f * h - 1.f;
  AttentionArgs a;
  a.q = q.data();
  a.q_stride_token = int64_t(c.hq) * c.d;
  a.q_stride_head = c.d;
  a.out = out.data();
  a.out_stride_token = int64_t(c.hq) * c.dv;
  a.out_stride_head = c.dv;
  // far_tokens: the same rows at a token stride that puts the last past 2^31 elements.
  const int64_t far_stride = c.far_tokens ? far_offsets::token_stride(total_q) : 0;
  const size_t q_row = size_t(c.hq) * c.d * esz, o_row = size_t(c.hq) * c.dv * esz;
  std::optional<CacheBuffer> far_q, far_out;
  if (c.far_tokens) {
    const size_t bytes = size_t(far_stride) * esz * total_q;
    far_q.emplace(bytes, 0, bytes);  // zero, untouched until the rows are copied in
    far_out.emplace(bytes, 0, bytes);
    for (int t = 0; t < total_q; ++t) {
      std::memcpy(far_q->data() + size_t(t) * far_stride * esz, q.data() + t * q_row, q_row);
      std::memset(far_out->data() + size_t(t) * far_stride * esz, 0xff, o_row);
    }
    a.q = far_q->data();
    a.out = far_out->data();
    a.q_stride_token = a.out_stride_token = far_stride;
  }
  a.lse = lse.data();
  a.kv = kv;
  a.batch.num_seqs = ns;
  a.batch.total_q = total_q;
  for (auto [qq, kk] : c.seqs)
    a.batch.max_seqlen_q = std::max(a.batch.max_seqlen_q, qq),
    a.batch.max_seqlen_k = std::max(a.batch.max_seqlen_k, kk);
  a.batch.cu_seqlens_q = cu.data();
  a.batch.seqused_k = used.data();
  a.batch.block_table = table.data();
  a.batch.block_table_stride = std::max(1, max_blocks);
  AttentionLayerParams& L = a.layer;
  L.num_heads = c.hq;
  L.num_kv_heads = hkv;
  L.head_size = c.d;
  L.head_size_v = c.dv;
  L.dtype = c.dt;
  L.scale = 1.f / std::sqrt(float(c.d));
  L.causal = c.causal;
  L.window_left = c.wl;
  L.window_right = c.wr;
  L.logits_soft_cap = c.cap;
  L.alibi_slopes = c.alibi ? slopes.data() : nullptr;
  L.sinks = c.sinks ? sinks.data() : nullptr;

  CpuFlashOptions opt;
  opt.isa = isa;
  opt.num_threads = threads;
  opt.bf16_dots = bf16_dots;
  opt.lockstep_heads = c.lockstep;
  auto be = oracle ? make_cpu_reference_backend() : make_cpu_flash_backend(opt);
  be->plan(a.batch, L);
  std::vector<uint8_t> ws(be->workspace_bytes() + 64);
  a.workspace = ws.data();
  be->run(a);
  bool wrote_outside = false;
  for (int t = 0; c.far_tokens && t < total_q; ++t) {
    const uint8_t* row = far_out->data() + size_t(t) * far_stride * esz;
    std::memcpy(out.data() + t * o_row, row, o_row);
    for (size_t i = 0; i < 64; ++i) wrote_outside |= row[o_row + i] != 0;
  }

  // fp64 reference over the dequantized cache (read_kv_cpu).
  Result res;
  std::vector<float> krow(static_cast<size_t>(c.d)), vrow(static_cast<size_t>(c.dv));
  const int g = c.hq / hkv;
  for (int s = 0; s < ns; ++s) {
    const int sq = cu[s + 1] - cu[s], sk = used[s];
    for (int i = 0; i < sq; ++i)
      for (int h = 0; h < c.hq; ++h) {
        const int t = cu[s] + i, p = sk - sq + i, kh = h / g;
        std::vector<double> x;
        std::vector<int> js;
        for (int j = 0; j < sk; ++j) {
          if (c.causal && j > p) continue;
          if (c.wl >= 0 && j < p - c.wl) continue;
          if (c.wr >= 0 && j > p + c.wr) continue;
          const int64_t slot =
              int64_t(table[size_t(s) * a.batch.block_table_stride + j / c.block]) * c.block +
              j % c.block;
          read_kv_cpu(kv, slot, kh, false, krow.data());
          double dot = 0;
          for (int e = 0; e < c.d; ++e)
            dot +=
                double(load_act(q.data(), c.dt, int64_t(t) * c.hq * c.d + h * c.d + e)) * krow[e];
          double v = L.scale * dot;
          if (c.cap > 0) v = c.cap * std::tanh(v / c.cap);
          if (c.alibi) v -= slopes[h] * std::abs(double(p - j));
          x.push_back(v);
          js.push_back(j);
        }
        double m = -INFINITY;
        for (double v : x) m = std::max(m, v);
        if (c.sinks) m = std::max(m, double(sinks[h]));
        double z = 0;
        for (double v : x) z += std::exp(v - m);
        if (c.sinks) z += std::exp(sinks[h] - m);
        std::vector<double> o(static_cast<size_t>(c.dv), 0.0);
        for (size_t n = 0; n < x.size(); ++n) {
          const int j = js[n];
          const int64_t slot =
              int64_t(table[size_t(s) * a.batch.block_table_stride + j / c.block]) * c.block +
              j % c.block;
          read_kv_cpu(kv, slot, kh, true, vrow.data());
          for (int e = 0; e < c.dv; ++e) o[e] += std::exp(x[n] - m) / z * vrow[e];
        }
        const double ref_lse =
            x.empty() ? (c.sinks ? double(sinks[h]) : -INFINITY) : m + std::log(z);
        for (int e = 0; e < c.dv; ++e) {
          const float got = load_act(out.data(), c.dt, int64_t(t) * c.hq * c.dv + h * c.dv + e);
          if (!std::isfinite(got)) res.finite = false;
          res.max_err = std::max(res.max_err, std::abs(double(got) - o[e]));
        }
        const float gl = lse[size_t(t) * c.hq + h];
        if (std::isinf(ref_lse)) {
          if (!(std::isinf(gl) && gl < 0)) res.max_lse_err = INFINITY;
        } else {
          res.max_lse_err = std::max(res.max_lse_err, std::abs(double(gl) - ref_lse));
        }
      }
  }
  res.wrote_outside = wrote_outside;
  res.out = std::move(out);
  return res;
}

double tolerance(const Case& c, Isa isa) {
  // Output magnitude is O(1) (unit-normal V, scaled caches are smaller); bf16 path rounds P.
  double t = c.dt == DType::kFloat32 ? 2e-4 : c.dt == DType::kFloat16 ? 4e-3 : 2e-2;
  if ((isa == Isa::kAvx512Bf16 || isa == Isa::kAmxBf16) && c.dt == DType::kBFloat16) t = 3e-2;
  return t;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  Case prefill{"prefill_gqa_causal"};
  prefill.hq = 8, prefill.hkv = 2, prefill.d = prefill.dv = 128;
  prefill.seqs = {{97, 97}, {5, 1013}, {1, 1}, {0, 7}};
  v.push_back(prefill);
  Case decode{"decode_split_mqa_sinks"};
  decode.hq = 4, decode.hkv = 1, decode.d = decode.dv = 64, decode.sinks = true;
  decode.seqs = {{1, 5000}};
  v.push_back(decode);
  Case dec2 = decode;
  dec2.name = "decode_split_batch_fp16";
  dec2.dt = DType::kFloat16, dec2.kv = KvCacheDType::kFloat16, dec2.sinks = false, dec2.hkv = 2;
  dec2.seqs = {{1, 2100}, {2, 54}, {1, 0}};
  v.push_back(dec2);
  Case fp32{"fp32_auto_noncausal_window"};
  fp32.dt = DType::kFloat32, fp32.kv = KvCacheDType::kAuto, fp32.causal = false;
  fp32.wl = 7, fp32.wr = 3, fp32.block = 1;
  fp32.seqs = {{33, 33}, {3, 70}};
  v.push_back(fp32);
  Case e4{"fp8_e4m3_per_tensor_softcap_alibi"};
  e4.kv = KvCacheDType::kFp8E4M3, e4.gran = ScaleGranularity::kPerTensor, e4.cap = 5.f;
  e4.alibi = true, e4.hq = 6, e4.hkv = 3, e4.seqs = {{20, 130}, {1, 97}};
  v.push_back(e4);
  Case e5{"fp8_e5m2_per_head_window"};
  e5.kv = KvCacheDType::kFp8E5M2, e5.gran = ScaleGranularity::kPerHead, e5.wl = 31;
  e5.dt = DType::kFloat16, e5.seqs = {{40, 200}};
  v.push_back(e5);
  Case f4{"nvfp4_dv_ne_d"};
  f4.kv = KvCacheDType::kNvfp4, f4.gran = ScaleGranularity::kPerTensor, f4.d = 192, f4.dv = 128;
  f4.hq = 2, f4.hkv = 1, f4.seqs = {{9, 80}, {1, 300}};
  v.push_back(f4);
  Case mla{"mla_latent_576_512"};
  mla.mla = true, mla.hq = 16, mla.d = 576, mla.dv = 512, mla.block = 64;
  mla.seqs = {{1, 700}, {2, 65}};
  v.push_back(mla);
  // Items of 33-64 rows (AMX: direct scores, packed P.V) and above 64 (GQA 128: direct scores in
  // eight 16-row blocks).
  Case g48{"decode_gqa_48_rows"};
  g48.hq = 48, g48.hkv = 1, g48.d = g48.dv = 128, g48.seqs = {{1, 300}, {3, 70}};
  v.push_back(g48);
  Case mla128{"mla_128_heads"};
  mla128.mla = true, mla128.hq = 128, mla128.d = 576, mla128.dv = 512, mla128.block = 64;
  mla128.seqs = {{1, 300}, {2, 97}};
  v.push_back(mla128);
  Case heads{"decode_batched_gqa_alibi"};
  heads.hq = 8, heads.hkv = 4, heads.d = heads.dv = 128, heads.alibi = true;
  heads.seqs = {{1, 300}, {1, 77}, {1, 1}, {1, 0}, {1, 513}, {1, 64}, {1, 129}, {1, 16}};
  v.push_back(heads);
  Case heads_split{"decode_batched_split_fp8_per_head"};
  heads_split.hq = 16, heads_split.hkv = 8, heads_split.kv = KvCacheDType::kFp8E4M3;
  heads_split.gran = ScaleGranularity::kPerHead, heads_split.sinks = true, heads_split.wl = 2000;
  heads_split.seqs = {{1, 3000}, {1, 2500}};
  v.push_back(heads_split);
  // Block sizes that are not powers of two (addressing by division, not shift): 48 keeps the
  // AMX direct path (16-key groups inside a block), 12 does not.
  Case b48{"decode_block_48_gqa"};
  b48.hq = 8, b48.hkv = 2, b48.d = b48.dv = 128, b48.block = 48;
  b48.seqs = {{1, 300}, {1, 97}, {3, 145}};
  v.push_back(b48);
  Case b12{"prefill_block_12"};
  b12.block = 12, b12.seqs = {{29, 29}, {1, 61}};
  v.push_back(b12);
  // Items of 17-32 rows: the few-rows form on the bf16 path where vdpbf16ps does not pay (bf16
  // rows, fp8 staged), the packed path elsewhere.
  Case spec{"spec_decode_24_32_rows"};
  spec.hq = 32, spec.hkv = 4, spec.d = spec.dv = 128, spec.seqs = {{4, 300}, {3, 97}, {4, 3}};
  v.push_back(spec);
  Case spec8 = spec;
  spec8.name = "spec_decode_32_rows_fp8";
  spec8.kv = KvCacheDType::kFp8E4M3, spec8.gran = ScaleGranularity::kPerTensor;
  v.push_back(spec8);
  Case f32rows{"fp32_32_rows_window"};
  f32rows.dt = DType::kFloat32, f32rows.kv = KvCacheDType::kAuto, f32rows.hq = 16;
  f32rows.hkv = 1, f32rows.d = f32rows.dv = 64, f32rows.wl = 40;
  f32rows.seqs = {{2, 150}, {1, 33}};
  v.push_back(f32rows);
  // A softcap far above the logits: s / cap ~ 1e-6, where tanh's (1 - e) / (1 + e) cancels (the
  // SIMD forms' logits were off by percents).
  Case bigcap{"fp32_softcap_far_above_the_logits"};
  bigcap.dt = DType::kFloat32, bigcap.kv = KvCacheDType::kAuto, bigcap.cap = 1e6f;
  bigcap.seqs = {{17, 60}, {1, 200}};
  v.push_back(bigcap);
  Case empty{"empty_rows_sinks"};
  empty.sinks = true, empty.seqs = {{4, 0}, {6, 3}};  // causal q_len > k_len: first rows empty
  v.push_back(empty);
  return v;
}

// Variants with AVX512_BF16 run bf16 items above decode size on vdpbf16ps or on the fp32 path by
// a measured rate (bf16_dots_pay): both ways are checked on any such CPU.
TEST(CpuFlash, MatchesFp64LoopOnEveryIsa) {
  for (Isa isa : cpu_flash::supported_isas())
    for (const bool dots : {false, true}) {
      if (dots && isa < Isa::kAvx512Bf16) continue;
      for (const Case& c : cases()) {
        SCOPED_TRACE(std::string(cpu_flash::to_string(isa)) + (dots ? " vdpbf16ps " : " ") +
                     c.name);
        const Result r =
            run_case(c, isa, 2, isa >= Isa::kAvx512Bf16 ? std::optional(dots) : std::nullopt);
        EXPECT_TRUE(r.finite);
        if (std::getenv("ATTNKIT_TEST_VERBOSE"))
          std::printf("%-12s %-36s err %.2e lse %.2e\n",
                      std::string(cpu_flash::to_string(isa)).c_str(), c.name, r.max_err,
                      r.max_lse_err);
        EXPECT_LE(r.max_err, tolerance(c, isa));
        EXPECT_LE(r.max_lse_err, c.dt == DType::kFloat32 ? 1e-4 : 2e-2);
      }
    }
}

// Used blocks past the first 4 GiB of the cache (reliability catalogue: offsets computed in 32
// bits wrap there): K element offsets above 2^31 and byte offsets above 2^32, and query / output
// tokens as far apart (strided views). The same blocks and rows at the start give the same output
// bit for bit, on CPU_REFERENCE and on every CPU_FLASH variant (the cache write, both products on
// each form: few rows, AMX tiles, packed, staged fp8), and nothing between the rows is written.
TEST(CpuFlash, BlocksPastFourGiB) {
  // Lazily mapped buffers of ~5 GiB each; a host that refuses such mappings (strict overcommit)
  // cannot run the test.
  void* probe = far_offsets::map_lazily(size_t(5) << 30);
  if (!probe) GTEST_SKIP() << "cannot map 5 GiB lazily on this host";
  far_offsets::unmap_lazily(probe, size_t(5) << 30);
  std::vector<Case> v;
  Case gqa{"bf16_gqa_prefill_decode_split"};
  gqa.hq = 32, gqa.hkv = 2, gqa.d = gqa.dv = 128, gqa.sinks = true;
  gqa.seqs = {{1, 3000}, {7, 53}, {4, 300}};
  v.push_back(gqa);
  Case e4{"fp8_e4m3_gqa"};
  e4.kv = KvCacheDType::kFp8E4M3, e4.gran = ScaleGranularity::kPerHead;
  e4.hq = 16, e4.hkv = 2, e4.d = e4.dv = 128, e4.seqs = {{1, 700}, {5, 97}};
  v.push_back(e4);
  Case f4{"nvfp4_block_scales"};
  f4.kv = KvCacheDType::kNvfp4, f4.gran = ScaleGranularity::kPerTensor;
  f4.hq = 4, f4.hkv = 1, f4.seqs = {{1, 200}, {3, 40}};
  v.push_back(f4);
  Case mla{"mla_latent"};
  mla.mla = true, mla.hq = 16, mla.d = 576, mla.dv = 512, mla.block = 64;
  mla.seqs = {{1, 300}, {2, 65}};
  v.push_back(mla);
  // near: the case at the start of its buffers; far: the same past 2^31 elements / 4 GiB.
  auto expect_same = [](const Result& near, const Result& far, double tol) {
    EXPECT_TRUE(far.finite);
    EXPECT_FALSE(far.wrote_outside);
    EXPECT_TRUE(near.out == far.out) << "the output differs from the same blocks at the start";
    EXPECT_LE(far.max_err, tol);
  };
  for (Case& c : v) {
    c.cache_offset = 0;
    Case far = c;
    far.base_bytes = far_offsets::kBaseBytes;
    far.far_tokens = true;
    {
      SCOPED_TRACE(std::string("CPU_REFERENCE ") + c.name);
      expect_same(run_case(c, Isa::kScalar, 1, {}, true), run_case(far, Isa::kScalar, 1, {}, true),
                  tolerance(c, Isa::kScalar));
    }
    for (Isa isa : cpu_flash::supported_isas()) {
      SCOPED_TRACE(std::string(cpu_flash::to_string(isa)) + " " + c.name);
      expect_same(run_case(c, isa, 2), run_case(far, isa, 2), tolerance(c, isa));
    }
  }
}

TEST(CpuFlash, SingleThreadEqualsPool) {
  Case c = cases()[1];
  const Result a = run_case(c, cpu_flash::detect_isa(), 1);
  const Result b = run_case(c, cpu_flash::detect_isa(), 3);
  EXPECT_LE(a.max_err, tolerance(c, cpu_flash::detect_isa()));
  EXPECT_LE(b.max_err, tolerance(c, cpu_flash::detect_isa()));
}

// Decode-sized items of several KV heads in lockstep (WorkItem::heads; one thread: four items
// a thread, so 2-8 heads an item here): per-head fp8 scales, ALiBi slopes, sinks and softcap go
// with their heads, rows of two tokens (speculative) and MHA's one-row heads too, a long
// sequence's split items put their partials where the merge finds them. Each case matches the
// fp64 loop and, where the plan cannot split, equals one head an item bit for bit (the same
// arithmetic in another order of heads).
TEST(CpuFlash, LockstepHeadsMatchOneHeadAnItem) {
  std::vector<Case> v;
  Case gqa{"bf16_gqa_32_8_alibi_sinks"};
  gqa.hq = 32, gqa.hkv = 8, gqa.d = gqa.dv = 128, gqa.alibi = true, gqa.sinks = true;
  gqa.seqs = {{1, 300}, {1, 97}, {1, 1013}, {2, 54}};
  v.push_back(gqa);
  Case e4{"fp8_e4m3_per_head_softcap"};
  e4.kv = KvCacheDType::kFp8E4M3, e4.gran = ScaleGranularity::kPerHead, e4.cap = 5.f;
  e4.hq = 16, e4.hkv = 4, e4.d = e4.dv = 128, e4.seqs = {{1, 200}, {1, 1}, {2, 130}, {1, 64}};
  v.push_back(e4);
  Case mha{"fp16_mha_window"};
  mha.dt = DType::kFloat16, mha.hq = mha.hkv = 8, mha.d = mha.dv = 64, mha.wl = 40;
  mha.seqs = {{1, 129}, {1, 17}};
  v.push_back(mha);
  Case e5{"fp8_e5m2_per_head_split"};
  e5.kv = KvCacheDType::kFp8E5M2, e5.gran = ScaleGranularity::kPerHead, e5.sinks = true;
  e5.hq = 16, e5.hkv = 4, e5.d = e5.dv = 128, e5.seqs = {{1, 6000}, {1, 33}, {1, 70}, {1, 5}};
  v.push_back(e5);
  for (Isa isa : cpu_flash::supported_isas())
    for (Case c : v) {
      SCOPED_TRACE(std::string(cpu_flash::to_string(isa)) + " " + c.name);
      const Result lock = run_case(c, isa, 1);
      c.lockstep = false;
      const Result one = run_case(c, isa, 1);
      EXPECT_TRUE(lock.finite);
      EXPECT_LE(lock.max_err, tolerance(c, isa));
      EXPECT_LE(lock.max_lse_err, 2e-2);
      if (c.seqs[0].second < 6000) EXPECT_TRUE(lock.out == one.out);
    }
}

// The planner's lockstep rule: heads of one row group wherever the threads keep about four items
// each; heads of 2-8 rows only up to max_head_rows (by default 8 on AMD cores, 1 elsewhere); 9 or
// more never; max_head_rows 0 groups none.
TEST(CpuFlash, LockstepRuleByRowsAHead) {
  // 256 one-head items on 8 threads: up to 8 heads an item.
  EXPECT_EQ(cpu_flash::lockstep_heads(1, 256, 8, 32, 1), 8);
  EXPECT_EQ(cpu_flash::lockstep_heads(1, 256, 8, 32, 8), 8);
  EXPECT_EQ(cpu_flash::lockstep_heads(1, 256, 8, 32, 0), 1);
  EXPECT_EQ(cpu_flash::lockstep_heads(4, 256, 8, 32, 8), 8);
  EXPECT_EQ(cpu_flash::lockstep_heads(4, 256, 8, 32, 1), 1);
  EXPECT_EQ(cpu_flash::lockstep_heads(8, 256, 8, 32, 8), 4);
  EXPECT_EQ(cpu_flash::lockstep_heads(9, 256, 8, 32, 8), 1);
  EXPECT_EQ(cpu_flash::lockstep_heads(9, 256, 8, 32, 16), 1);
  // Heads of several rows by default: on few threads everywhere, on many by vendor.
  EXPECT_EQ(cpu_flash::lockstep_max_head_rows(1), 8);
  EXPECT_EQ(cpu_flash::lockstep_max_head_rows(cpu_flash::kLockstepFewThreads), 8);
  const int many = cpu_flash::lockstep_max_head_rows(16);
  EXPECT_TRUE(many == 1 || many == 8) << many;
  // 64 items on 8 threads: two heads an item keep four items a thread.
  EXPECT_EQ(cpu_flash::lockstep_heads(1, 64, 8, 32, 1), 2);
  EXPECT_EQ(cpu_flash::lockstep_heads(1, 16, 8, 32, 1), 1);
}

// Work is split by cost, not only when items are few: in a ragged batch a sequence whose items
// exceed a quarter of a thread's share splits (workspace for its partials), uniform batches with
// enough items do not, and the split ragged batch matches the fp64 loop.
TEST(CpuFlash, RaggedBatchSplitsTheLongSequenceOnly) {
  auto plan_bytes = [](const std::vector<int32_t>& lens, int threads) {
    CpuFlashOptions opt;
    opt.num_threads = threads;
    auto be = make_cpu_flash_backend(opt);
    std::vector<int32_t> cu(lens.size() + 1);
    std::iota(cu.begin(), cu.end(), 0);
    AttentionBatch b;
    b.num_seqs = int(lens.size());
    b.total_q = b.num_seqs;
    b.max_seqlen_q = 1;
    b.max_seqlen_k = *std::max_element(lens.begin(), lens.end());
    b.cu_seqlens_q = cu.data();
    b.seqused_k = lens.data();
    AttentionLayerParams L;
    L.num_heads = 8, L.num_kv_heads = 2, L.head_size = L.head_size_v = 128;
    L.scale = 0.1f;
    be->plan(b, L);
    return be->workspace_bytes();
  };
  std::vector<int32_t> ragged(32, 128), uniform(32, 2048);
  ragged[5] = 8192;  // 64 items for 16 threads: before, nothing split
  EXPECT_GT(plan_bytes(ragged, 16), 0u);
  EXPECT_EQ(plan_bytes(uniform, 16), 0u);
  EXPECT_EQ(plan_bytes(uniform, 2), 0u);

  Case c{"ragged_16_threads"};
  c.hq = 8, c.hkv = 2, c.d = c.dv = 128, c.sinks = true;
  for (int32_t n : ragged) c.seqs.push_back({1, n});
  const Isa isa = cpu_flash::detect_isa();
  const Result r = run_case(c, isa, 16);
  EXPECT_TRUE(r.finite);
  EXPECT_LE(r.max_err, tolerance(c, isa));
}

// A cache whose rows could all start on 64-byte lines but does not is read correctly (the same
// output as aligned) and warned about once per process; an aligned one is not.
TEST(CpuFlash, WarnsOnceAboutAnUnalignedCache) {
  Case c = cases()[1];
  const Isa isa = cpu_flash::detect_isa();
  reset_warn_once();
  ScopedLogCapture log;
  c.cache_offset = 0;
  const Result aligned = run_case(c, isa, 1);
  EXPECT_LE(aligned.max_err, tolerance(c, isa));
  EXPECT_EQ(log.text().find("not 64-byte aligned"), std::string::npos) << log.text();
  for (int offset : {16, 32}) {
    c.cache_offset = offset;
    EXPECT_EQ(run_case(c, isa, 1).out, aligned.out) << "offset " << offset;
  }
  const std::string text = log.text();
  EXPECT_NE(text.find("CPU_FLASH: the KV cache is not 64-byte aligned (k at 16"), std::string::npos)
      << text;
  int said = 0;
  for (size_t at = 0; (at = text.find("not 64-byte aligned", at)) != std::string::npos; ++at)
    ++said;
  EXPECT_EQ(said, 1) << text;
}

TEST(CpuFlash, RejectsUnsupportedHeadSize) {
  auto be = make_cpu_flash_backend();
  AttentionBatch b;
  AttentionLayerParams L;
  L.num_heads = L.num_kv_heads = 1;
  L.head_size = L.head_size_v = 72;
  L.scale = 0.1f;
  EXPECT_THROW(be->plan(b, L), Unsupported);
  L.head_size = L.head_size_v = 64;
  L.num_heads = 3, L.num_kv_heads = 2;
  EXPECT_THROW(be->plan(b, L), InvalidArgument);
}

// An fp8 e4m3 NaN code (0x7f / 0xff) in a slot below seqused_k is data, not padding
// (docs/semantics.md §2 decodes it to NaN): every ISA must give NaN exactly where CPU_REFERENCE
// does, i.e. the whole row and its LSE for a NaN in K, the one element for a NaN in V, with the
// other KV head's rows finite and equal. Both NaN keys are seen by every query row of their
// sequence; the second sequence is long enough to be split (the LSE merge sees the NaN too).
TEST(CpuFlash, Fp8NanCodeInAVisibleSlotPropagatesLikeTheReference) {
  const int hq = 4, hkv = 2, d = 64, bs = 16;
  const std::vector<std::pair<int, int>> seqs = {{3, 70}, {1, 1100}};
  std::vector<int32_t> cu{0}, used;
  int stride = 0;
  for (auto [q, k] : seqs) {
    cu.push_back(cu.back() + q);
    used.push_back(k);
    stride = std::max(stride, (k + bs - 1) / bs);
  }
  const int ns = int(seqs.size()), total_q = cu.back(), nb = ns * stride;
  std::vector<int32_t> table(size_t(ns) * stride);
  std::iota(table.begin(), table.end(), 0);
  KvCacheView kv;
  kv.dtype = KvCacheDType::kFp8E4M3;
  kv.num_blocks = nb;
  kv.block_size = bs;
  kv.num_kv_heads = hkv;
  kv.head_size = kv.head_size_v = d;
  kv.stride_token = kv.v_stride_token = d;
  kv.stride_head = kv.v_stride_head = int64_t(d) * bs;
  kv.stride_block = kv.v_stride_block = int64_t(d) * bs * hkv;
  const float scale = 0.01f;
  kv.scale_granularity = ScaleGranularity::kPerTensor;
  kv.k_scale = kv.v_scale = &scale;
  std::vector<uint8_t> kc(size_t(kv.stride_block) * nb), vc(kc.size());
  kv.k = kc.data();
  kv.v = vc.data();
  auto byte_of = [&](int s, int j, int g) {
    return size_t(table[size_t(s) * stride + j / bs]) * kv.stride_block +
           size_t(g) * kv.stride_head + size_t(j % bs) * kv.stride_token;
  };
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int s = 0; s < ns; ++s) {
    const int n = used[s];
    std::vector<float> k(size_t(n) * hkv * d), v(k.size());
    for (float& x : k) x = nd(rng);
    for (float& x : v) x = nd(rng);
    std::vector<int64_t> slots(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j)
      slots[j] = int64_t(table[size_t(s) * stride + j / bs]) * bs + j % bs;
    KvWriteArgs w;
    w.k = k.data();
    w.v = v.data();
    w.dtype = DType::kFloat32;
    w.num_tokens = n;
    w.k_stride_token = w.v_stride_token = int64_t(hkv) * d;
    w.k_stride_head = w.v_stride_head = d;
    w.slot_mapping = slots.data();
    w.cache = kv;
    write_kv_cpu(w);
  }
  kc[byte_of(0, 5, 0) + 3] = 0xff;    // -NaN in K: rows of KV head 0 in sequence 0
  vc[byte_of(1, 700, 0) + 9] = 0x7f;  // +NaN in V: element 9 of those rows in sequence 1
  // +NaN in V where KV head 1's 6 rows of sequence 0 see it: on AMX that item multiplies V rows
  // as they lie in the cache, which spreads the NaN to element 8; it must rerun on the packed path.
  vc[byte_of(0, 40, 1) + 9] = 0x7f;

  for (DType dt : {DType::kBFloat16, DType::kFloat16}) {  // bf16: the bf16 / AMX paths too
    SCOPED_TRACE(std::string(to_string(dt)));
    std::vector<uint16_t> q(size_t(total_q) * hq * d);
    for (size_t i = 0; i < q.size(); ++i)
      q[i] = dt == DType::kBFloat16 ? float_to_bf16_bits(nd(rng)) : float_to_fp16_bits(nd(rng));
    AttentionArgs a;
    a.q = q.data();
    a.q_stride_token = int64_t(hq) * d;
    a.q_stride_head = d;
    a.out_stride_token = int64_t(hq) * d;
    a.out_stride_head = d;
    a.kv = kv;
    a.batch.num_seqs = ns;
    a.batch.total_q = total_q;
    a.batch.max_seqlen_q = 3;
    a.batch.max_seqlen_k = 1100;
    a.batch.cu_seqlens_q = cu.data();
    a.batch.seqused_k = used.data();
    a.batch.block_table = table.data();
    a.batch.block_table_stride = stride;
    a.layer.num_heads = hq;
    a.layer.num_kv_heads = hkv;
    a.layer.head_size = a.layer.head_size_v = d;
    a.layer.dtype = dt;
    a.layer.scale = 0.125f;
    struct Out {
      std::vector<uint16_t> out;
      std::vector<float> lse;
    };
    auto run = [&](AttentionBackend& be) {
      Out o{std::vector<uint16_t>(size_t(total_q) * hq * d),
            std::vector<float>(size_t(total_q) * hq)};
      AttentionArgs r = a;
      r.out = o.out.data();
      r.lse = o.lse.data();
      be.plan(a.batch, a.layer);
      std::vector<uint8_t> ws(be.workspace_bytes() + 64);
      r.workspace = ws.data();
      be.run(r);
      return o;
    };
    auto ref_be = make_cpu_reference_backend();
    const Out want = run(*ref_be);
    const int nan_rows =
        int(std::count_if(want.lse.begin(), want.lse.end(), [](float x) { return std::isnan(x); }));
    EXPECT_EQ(nan_rows, 3 * 2) << "the reference should give NaN rows for K's NaN";
    for (Isa isa : cpu_flash::supported_isas()) {
      SCOPED_TRACE(std::string(cpu_flash::to_string(isa)));
      CpuFlashOptions opt;
      opt.isa = isa;
      opt.num_threads = 2;
      auto be = make_cpu_flash_backend(opt);
      const Out got = run(*be);
      auto value = [&](uint16_t b) {
        return dt == DType::kBFloat16 ? bf16_bits_to_float(b) : fp16_bits_to_float(b);
      };
      int bad = 0;
      for (size_t i = 0; i < want.out.size(); ++i) {
        const float g = value(got.out[i]), w = value(want.out[i]);
        const bool ok = std::isnan(w) ? std::isnan(g) : std::abs(g - w) <= 3e-2f;
        if (!ok && bad++ < 4)
          ADD_FAILURE() << "out[t=" << i / (hq * d) << ",h=" << i / d % hq << ",e=" << i % d
                        << "] got " << g << " want " << w;
      }
      for (size_t i = 0; i < want.lse.size(); ++i) {
        const float g = got.lse[i], w = want.lse[i];
        const bool ok = std::isnan(w) ? std::isnan(g) : std::abs(g - w) <= 2e-2f;
        if (!ok && bad++ < 8)
          ADD_FAILURE() << "lse[t=" << i / hq << ",h=" << i % hq << "] got " << g << " want " << w;
      }
      EXPECT_EQ(bad, 0);
    }
  }
}

// Every finite fp8 code dequantizes exactly on every ISA's path (AMX and AVX-512 BF16 stage fp8
// rows to bf16 with integer arithmetic). A window of one key makes query row i read exactly V row
// i: O = 1 x V, exact in bf16 and fp16 outputs. V row i holds codes d i .. d i + d - 1; the NaN
// and inf codes are left out (a masked key's 0 x NaN poisons its tile on the tiled paths, as
// docs/semantics.md says; Fp8NanCodeInAVisibleSlotPropagatesLikeTheReference covers NaN).
TEST(CpuFlash, EveryFiniteFp8CodeDequantizesExactly) {
  const int n = 4, bs = 16;
  for (int d : {64, 80, 96})  // 80: a 16-code step at the row end; 96 (AMX): a 32-code one
    for (KvCacheDType kd : {KvCacheDType::kFp8E4M3, KvCacheDType::kFp8E5M2}) {
      const bool e5m2 = kd == KvCacheDType::kFp8E5M2;
      auto finite = [&](int c) { return e5m2 ? (c & 0x7c) != 0x7c : (c & 0x7f) != 0x7f; };
      auto value = [&](int c) {
        return e5m2 ? fp8_e5m2_to_float(uint8_t(c)) : fp8_e4m3_to_float(uint8_t(c));
      };
      KvCacheView kv;
      kv.dtype = kd;
      kv.num_blocks = 1;
      kv.block_size = bs;
      kv.num_kv_heads = 1;
      kv.head_size = kv.head_size_v = d;
      kv.stride_token = kv.v_stride_token = d;
      kv.stride_head = kv.v_stride_head = kv.stride_block = kv.v_stride_block = int64_t(d) * bs;
      const float one = 1.f;
      kv.scale_granularity = ScaleGranularity::kPerTensor;
      kv.k_scale = kv.v_scale = &one;
      std::vector<uint8_t> kc(size_t(d) * bs, e5m2 ? 0x3c : 0x38), vc(kc.size(), 0);  // K = 1.0
      for (int c = 0; c < 256; ++c)
        if (finite(c)) vc[size_t(c)] = uint8_t(c);
      kv.k = kc.data();
      kv.v = vc.data();
      const std::vector<int32_t> cu{0, n}, used{n}, table{0};
      for (DType dt : {DType::kBFloat16, DType::kFloat16}) {
        std::vector<uint16_t> q(size_t(n) * d, dt == DType::kBFloat16 ? float_to_bf16_bits(0.5f)
                                                                      : float_to_fp16_bits(0.5f));
        AttentionArgs a;
        a.q = q.data();
        a.q_stride_token = a.out_stride_token = d;
        a.q_stride_head = a.out_stride_head = d;
        a.kv = kv;
        a.batch.num_seqs = 1;
        a.batch.total_q = n;
        a.batch.max_seqlen_q = a.batch.max_seqlen_k = n;
        a.batch.cu_seqlens_q = cu.data();
        a.batch.seqused_k = used.data();
        a.batch.block_table = table.data();
        a.batch.block_table_stride = 1;
        a.layer.num_heads = a.layer.num_kv_heads = 1;
        a.layer.head_size = a.layer.head_size_v = d;
        a.layer.dtype = dt;
        a.layer.scale = 0.125f;
        a.layer.causal = true;
        a.layer.window_left = 0;  // each query sees its own key only
        for (Isa isa : cpu_flash::supported_isas()) {
          SCOPED_TRACE("d " + std::to_string(d) + " " + std::string(to_string(kd)) + " " +
                       std::string(to_string(dt)) + " " + std::string(cpu_flash::to_string(isa)));
          CpuFlashOptions opt;
          opt.isa = isa;
          opt.num_threads = 1;
          auto be = make_cpu_flash_backend(opt);
          std::vector<uint16_t> out(size_t(n) * d, 0x7fff);
          AttentionArgs r = a;
          r.out = out.data();
          be->plan(a.batch, a.layer);
          std::vector<uint8_t> ws(be->workspace_bytes() + 64);
          r.workspace = ws.data();
          be->run(r);
          int bad = 0;
          for (int c = 0; c < 256; ++c) {
            const float want = finite(c) ? value(c) : 0.f;
            const float got = load_act(out.data(), dt, c);
            if (got != want && bad++ < 5)  // -0 sums to +0: values, not signs of zero
              ADD_FAILURE() << "code 0x" << std::hex << c << std::dec << ": got " << got
                            << ", want " << want;
          }
          EXPECT_EQ(bad, 0);
        }
      }
    }
}

// The AVX512_BF16 variant stages fp8 rows to bf16 through byte tables on CPUs with AVX512_VBMI and
// through word tables on those without (Cooper Lake), so one machine runs only one of them in the
// suites above. Both here, over every code, at row lengths that end in each tail (16, 32, 48
// codes past a whole 64): the bits must be fp8 -> float -> bf16's (NaN codes: a NaN).
TEST(CpuFlash, Fp8StagingTablesGiveEveryCodeItsBf16) {
  if (!cpu_flash::isa_supported(Isa::kAvx512Bf16)) GTEST_SKIP() << "no AVX512_BF16 variant here";
  for (KvCacheDType kd : {KvCacheDType::kFp8E4M3, KvCacheDType::kFp8E5M2})
    for (int d : {16, 32, 48, 80, 112, 256})
      for (bool byte_tables : {false, true}) {
        SCOPED_TRACE(std::string(to_string(kd)) + " d " + std::to_string(d) +
                     (byte_tables ? " byte tables" : " word tables"));
        const int rows = (256 + d - 1) / d + 1;  // every code, then more in another order
        std::vector<uint8_t> codes(size_t(rows) * d);
        for (size_t i = 0; i < codes.size(); ++i) codes[i] = uint8_t(i < 256 ? i : i * 97);
        std::vector<uint16_t> out(codes.size(), 0x1234);
        try {
          cpu_flash::stage_fp8_as_bf16(kd, byte_tables, codes.data(), rows, d, out.data());
        } catch (const Unsupported& e) {
          ASSERT_TRUE(byte_tables) << e.what();  // only the byte tables may be missing (VBMI)
          continue;
        }
        int bad = 0;
        for (size_t i = 0; i < codes.size(); ++i) {
          const float v = kd == KvCacheDType::kFp8E5M2 ? fp8_e5m2_to_float(codes[i])
                                                       : fp8_e4m3_to_float(codes[i]);
          const uint16_t want = float_to_bf16_bits(v);
          const bool ok = std::isnan(v) ? std::isnan(bf16_bits_to_float(out[i])) : out[i] == want;
          if (!ok && bad++ < 5)
            ADD_FAILURE() << "code 0x" << std::hex << int(codes[i]) << " at " << std::dec << i
                          << ": got 0x" << std::hex << out[i] << ", want 0x" << want;
        }
        EXPECT_EQ(bad, 0);
      }
}

}  // namespace
}  // namespace attnkit
