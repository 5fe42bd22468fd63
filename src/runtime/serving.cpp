// The serving loop of `attnkit run` (include/attnkit/runtime.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <span>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/log.hpp"
#include "attnkit/model.hpp"
#include "attnkit/numeric.hpp"
#include "attnkit/runtime.hpp"
#include "attnkit/selector.hpp"
#include "backends/cpu_reference/cpu_reference_backend.hpp"
#include "backends/cuda_flash/cuda_flash_backend.hpp"
#include "core/strings.hpp"
#include "runtime/memory.hpp"
#include "stacks/stacks.hpp"

namespace attnkit {
namespace {

using Clock = std::chrono::steady_clock;

// fp8 caches store value / scale; 0.025 keeps N(0,1) activations (|x| < 11) inside e4m3's 448.
constexpr float kFp8Scale = 0.025f;

float decode_element(const void* p, DType dt, size_t i) {
  switch (dt) {
    case DType::kFloat32:
      return static_cast<const float*>(p)[i];
    case DType::kFloat16:
      return fp16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16:
      return bf16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
  }
  return 0.f;
}

// Random N(0,1) activations, generated once and encoded in the model dtype. Each tensor is a
// slice at a fresh pseudo-random offset, so every layer and step sees different inputs without
// drawing millions of normals per step.
class ActivationPool {
 public:
  ActivationPool(DType dt, size_t n, uint64_t seed)
      : dt_(dt), n_(n), bytes_(size_t(dtype_bytes(dt))) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.f, 1.f);
    data_.resize(2 * n_ * bytes_);  // doubled so a slice never wraps
    for (size_t i = 0; i < n_; ++i) {
      const float x = normal(rng);
      uint8_t* dst = data_.data() + i * bytes_;
      if (dt_ == DType::kFloat32) {
        std::memcpy(dst, &x, 4);
      } else {
        const uint16_t h = dt_ == DType::kFloat16 ? float_to_fp16_bits(x) : float_to_bf16_bits(x);
        std::memcpy(dst, &h, 2);
      }
    }
    std::memcpy(data_.data() + n_ * bytes_, data_.data(), n_ * bytes_);
  }
  // A host pointer to `count` elements (count <= n).
  const void* slice(size_t count, uint64_t key) const {
    if (count > n_)
      throw InvalidArgument(fmt::format("activation slice of {} > pool {}", count, n_));
    const uint64_t h = key * 0x9e3779b97f4a7c15ull;
    const size_t offset = size_t((h ^ (h >> 29)) % n_);
    return data_.data() + offset * bytes_;
  }

 private:
  DType dt_;
  size_t n_, bytes_;
  std::vector<uint8_t> data_;
};

std::vector<float> alibi_slopes(int num_heads) {
  // The ALiBi paper's geometric slopes, with the interleaved extension for non-powers of two.
  auto pow2_slopes = [](int n) {
    std::vector<float> s;
    const double start = std::pow(2.0, -8.0 / n);
    for (int i = 0; i < n; ++i) s.push_back(float(std::pow(start, i + 1)));
    return s;
  };
  int closest = 1;
  while (closest * 2 <= num_heads) closest *= 2;
  std::vector<float> slopes = pow2_slopes(closest);
  if (closest < num_heads) {
    auto extra = pow2_slopes(2 * closest);
    for (int i = 0; int(slopes.size()) < num_heads; i += 2) slopes.push_back(extra[size_t(i)]);
  }
  return slopes;
}

struct Seq {
  RequestId id = 0;
  int prompt_len = 0;
  int64_t processed = 0;  // tokens whose K/V are in the cache
  int decoded = 0;
};

struct StepSeq {
  size_t seq = 0;       // index into the request list
  int64_t q_start = 0;  // absolute position of the first query
  int q_len = 0;
};

// One step's schedule: decodes first (one token each, while the budget lasts), then prefill
// chunks within the token budget; a chunk that would end inside the image waits for a step that
// takes the image whole. Encoder-decoder models (`encoder_len` > 0) admit a request only while
// its encoder pass fits the step's encoder budget (as large as the token budget). Empty when
// every request is done.
std::vector<StepSeq> schedule_step(const std::vector<Seq>& seqs, int budget, int image,
                                   int decode_steps, int encoder_len) {
  std::vector<StepSeq> batch;
  int encoder_budget = budget;
  for (size_t i = 0; i < seqs.size() && budget > 0; ++i) {
    const Seq& s = seqs[i];
    if (s.processed < s.prompt_len || s.decoded >= decode_steps) continue;
    batch.push_back({i, s.processed, 1});
    --budget;
  }
  for (size_t i = 0; i < seqs.size() && budget > 0; ++i) {
    const Seq& s = seqs[i];
    if (s.processed >= s.prompt_len) continue;
    const int n = int(std::min<int64_t>(budget, s.prompt_len - s.processed));
    if (s.processed < image && s.processed + n < image) continue;  // next step, whole image
    if (encoder_len && s.processed == 0) {
      if (encoder_len > encoder_budget) continue;
      encoder_budget -= encoder_len;
    }
    batch.push_back({i, s.processed, n});
    budget -= n;
  }
  return batch;
}

// The requests' state after a step's batch ran.
void advance(std::vector<Seq>& seqs, const std::vector<StepSeq>& batch) {
  for (const auto& b : batch) {
    Seq& s = seqs[b.seq];
    if (s.processed >= s.prompt_len) ++s.decoded;
    s.processed += b.q_len;
  }
}

// Steps the schedule takes from `seqs`' state to the end (the progress display's total).
int count_steps(std::vector<Seq> seqs, int budget, int image, int decode_steps, int encoder_len) {
  for (int n = 0;; ++n) {
    const std::vector<StepSeq> batch =
        schedule_step(seqs, budget, image, decode_steps, encoder_len);
    if (batch.empty()) return n;
    advance(seqs, batch);
  }
}

struct LayerRun {
  const LayerSpec* spec = nullptr;
  size_t group = 0;  // index into the signature groups
  int kv_group = 0;
  int kv_root = 0;  // the layer whose cache this one reads (itself unless shared)
  bool writes_kv = true;
  AttentionLayerParams params;
  Buffer alibi, sinks;
  KvCacheView view;
  // fp8 scales of K/V written in the contiguous form (encoder layers), host and device.
  std::vector<float> contiguous_scales_host;
  Buffer contiguous_scales;
};

struct SigGroup {
  Selection sel;
  std::unique_ptr<AttentionBackend> backend;
  Buffer workspace;  // grown at plan time, so run() never allocates
  std::vector<size_t> layers;
  GroupRunReport report;
};

double tolerance_for(DType out, double max_ref) {
  const double eps = out == DType::kBFloat16  ? 1.0 / 256
                     : out == DType::kFloat16 ? 1.0 / 2048
                                              : 1.0 / (1 << 20);
  return 4 * eps * std::max(1.0, max_ref) + (out == DType::kFloat32 ? 1e-4 : 0.0);
}

// The K/V rows one layer wrote, per request in position order, kept on the host. Verification
// rebuilds a contiguous cache from them with the CPU KV write (one block per request), so the
// reference checks the backend's write kernel, slot mapping and block tables too, not only its
// attention over a cache it filled itself.
struct ShadowKv {
  std::vector<std::vector<uint8_t>> k, v;  // per request: rows of num_kv_heads x head_size
};

struct ShadowCache {
  std::vector<uint8_t> k, v, k_block_scales, v_block_scales;
  std::vector<float> k_scales, v_scales;
  std::vector<int32_t> block_table;
  KvCacheView view;
};

// Writes every request's rows [0, used) into its own block of a fresh host cache of the layer's
// storage format and scales.
ShadowCache build_shadow_cache(const ShadowKv& rows, const std::vector<size_t>& seqs,
                               const std::vector<int32_t>& used, const LayerSpec& s,
                               ScaleGranularity granularity, std::vector<float> k_scales,
                               std::vector<float> v_scales) {
  ShadowCache c;
  const int bs = std::max(1, *std::max_element(used.begin(), used.end()));
  const int64_t n = int64_t(seqs.size()), H = s.num_kv_heads;
  const KvCacheDType dt = s.resolved_kv_dtype();
  const int64_t rk = kv_bytes_per_head_vector(dt, s.dtype, s.head_size);
  const int64_t rv = kv_bytes_per_head_vector(dt, s.dtype, s.head_size_v);
  KvCacheView& v = c.view;
  v.dtype = dt;
  v.num_blocks = int(n);
  v.block_size = bs;
  v.num_kv_heads = int(H);
  v.head_size = s.head_size;
  v.head_size_v = s.head_size_v;
  v.stride_token = rk;
  v.stride_head = rk * bs;
  v.stride_block = rk * bs * H;
  c.k.assign(size_t(v.stride_block * n), 0);
  v.k = c.k.data();
  if (!s.is_mla()) {
    v.v_stride_token = rv;
    v.v_stride_head = rv * bs;
    v.v_stride_block = rv * bs * H;
    c.v.assign(size_t(v.v_stride_block * n), 0);
    v.v = c.v.data();
  }
  // nvfp4 scale rows of a K or V head vector of `size` elements, laid out like its data rows.
  auto scale_rows = [&](int size, int64_t& block, int64_t& head, int64_t& token,
                        std::vector<uint8_t>& buf) {
    token = kv_block_scale_bytes_per_head_vector(dt, size);
    head = token * bs;
    block = head * H;
    buf.assign(size_t(block * n), 0);
    return buf.data();
  };
  if (dt == KvCacheDType::kNvfp4) {
    v.k_block_scales = scale_rows(s.head_size, v.sb_block, v.sb_head, v.sb_token, c.k_block_scales);
    if (!s.is_mla())
      v.v_block_scales =
          scale_rows(s.head_size_v, v.v_sb_block, v.v_sb_head, v.v_sb_token, c.v_block_scales);
  }
  v.scale_granularity = granularity;
  c.k_scales = std::move(k_scales);
  c.v_scales = std::move(v_scales);
  v.k_scale = c.k_scales.empty() ? nullptr : c.k_scales.data();
  v.v_scale = c.v_scales.empty() ? nullptr : c.v_scales.data();
  for (int64_t i = 0; i < n; ++i) {
    c.block_table.push_back(int32_t(i));
    std::vector<int64_t> slots(size_t(used[size_t(i)]));
    for (size_t t = 0; t < slots.size(); ++t) slots[t] = i * bs + int64_t(t);
    KvWriteArgs w;
    w.k = rows.k[seqs[size_t(i)]].data();
    w.v = s.is_mla() ? nullptr : rows.v[seqs[size_t(i)]].data();
    w.dtype = s.dtype;
    w.num_tokens = int(slots.size());
    w.k_stride_head = s.head_size;
    w.k_stride_token = H * s.head_size;
    w.v_stride_head = s.head_size_v;
    w.v_stride_token = H * s.head_size_v;
    w.slot_mapping = slots.data();
    w.cache = v;
    write_kv_cpu(w);
  }
  return c;
}

// Metadata buffers on the device, allocated once for the largest step (run() and the step loop
// then allocate nothing).
struct KvGroupStep {
  std::vector<int32_t> block_table;
  std::vector<int64_t> slots;
  int stride = 0;
  Buffer block_table_dev, slots_dev;
};

// The layer's attention parameters, its ALiBi slopes and (random) sink logits on the device.
void init_layer_params(LayerRun& L, RunMemory& mem, std::mt19937_64& rng,
                       std::normal_distribution<float>& normal) {
  const LayerSpec& s = *L.spec;
  AttentionLayerParams& p = L.params;
  p.num_heads = s.num_heads;
  p.num_kv_heads = s.num_kv_heads;
  p.head_size = s.head_size;
  p.head_size_v = s.head_size_v;
  p.dtype = s.dtype;
  p.scale = float(s.scale());
  // Only decoder self-attention is causal; an encoder's local window is symmetric (semantics §3).
  p.causal = s.causal();
  p.window_left = s.window_left();
  p.window_right = s.window_right();
  p.attention_chunk_size = s.attention_chunk_size.value_or(0);
  p.logits_soft_cap = float(s.logits_soft_cap);
  if (s.alibi) {
    auto slopes = alibi_slopes(s.num_heads);
    L.alibi = Buffer(mem, slopes.size() * 4);
    mem.copy_from_host(L.alibi.get(), slopes.data(), slopes.size() * 4);
    p.alibi_slopes = static_cast<const float*>(L.alibi.get());
  }
  if (s.sinks) {
    std::vector<float> sinks(size_t(s.num_heads));
    for (auto& x : sinks) x = normal(rng);
    L.sinks = Buffer(mem, sinks.size() * 4);
    mem.copy_from_host(L.sinks.get(), sinks.data(), sinks.size() * 4);
    p.sinks = static_cast<const float*>(L.sinks.get());
  }
}

std::string describe_group(const SigGroup& g, const std::vector<LayerRun>& layers, int image) {
  const LayerSpec& s = *layers[g.layers.front()].spec;
  std::vector<int> idx;
  for (size_t li : g.layers) idx.push_back(layers[li].spec->layer_index);
  std::string where = idx.size() == 1
                          ? fmt::format("layer {}", idx[0])
                          : fmt::format("{} layers {}..{}", idx.size(), idx.front(), idx.back());
  return fmt::format(
      "{}: {} heads {}/{}, d{}/{}{}{}{}{}{}{}{}, kv {}{}", where, to_string(s.attn_type),
      s.num_heads, s.num_kv_heads, s.head_size, s.head_size_v,
      !s.sliding_window ? std::string()
      : s.attn_type == AttentionType::kEncoderOnly
          ? fmt::format(", window ±{}", *s.sliding_window - 1)
          : fmt::format(", window {}", *s.sliding_window),
      s.attention_chunk_size ? fmt::format(", chunked local {}", *s.attention_chunk_size) : "",
      s.softmax_scale ? fmt::format(", scale {:.6g}", *s.softmax_scale) : "",
      s.logits_soft_cap != 0 ? fmt::format(", softcap {}", s.logits_soft_cap) : "",
      s.sinks ? ", sinks" : "", s.alibi ? ", alibi" : "",
      s.mm_prefix && image ? fmt::format(", bidirectional image [0, {})", image) : "",
      s.resolved_kv_dtype() == KvCacheDType::kAuto ? "float32" : to_string(s.resolved_kv_dtype()),
      s.kv_scale_granularity == ScaleGranularity::kPerHead ? " (per-head scales)" : "");
}

// A write of nq new tokens' K/V rows ([nq, num_kv_heads, head_size] of the model dtype; MLA: the
// latent rows only) into `cache` through `slots`.
KvWriteArgs token_rows_write(const LayerSpec& s, const void* k, const void* v, size_t nq,
                             const int64_t* slots, const KvCacheView& cache) {
  KvWriteArgs w;
  w.k = k;
  w.v = s.is_mla() ? nullptr : v;
  w.dtype = s.dtype;
  w.num_tokens = int(nq);
  w.k_stride_head = s.head_size;
  w.k_stride_token = int64_t(s.num_kv_heads) * s.head_size;
  w.v_stride_head = s.head_size_v;
  w.v_stride_token = int64_t(s.num_kv_heads) * s.head_size_v;
  w.slot_mapping = slots;
  w.cache = cache;
  return w;
}

// A layer run's arguments over token-major q and out rows; the caller fills the batch's device
// metadata.
AttentionArgs token_rows_args(const LayerSpec& s, const void* q, void* out, const KvCacheView& kv,
                              const AttentionBatch& host_batch, const AttentionLayerParams& params,
                              void* workspace) {
  AttentionArgs a;
  a.q = q;
  a.q_stride_head = s.head_size;
  a.q_stride_token = int64_t(s.num_heads) * s.head_size;
  a.out = out;
  a.out_stride_head = s.head_size_v;
  a.out_stride_token = int64_t(s.num_heads) * s.head_size_v;
  a.kv = kv;
  a.batch = host_batch;
  a.layer = params;
  a.workspace = workspace;
  return a;
}

// Runs the layer with its output poisoned first (every row must be overwritten) and adds the
// run's time, alone on the device, to the group's.
void timed_run(AttentionBackend& backend, const AttentionArgs& a, size_t out_bytes, RunMemory& mem,
               GroupRunReport& g) {
  mem.fill_nan(a.out, out_bytes);
  mem.synchronize();
  const auto t0 = Clock::now();
  backend.run(a, mem.stream());
  mem.synchronize();
  g.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

// Appends each batch sequence's rows of a step's host K/V (token-major, cu row offsets) to its
// request's rows in `sh` (MLA: K only).
void append_step_rows(ShadowKv& sh, const std::vector<size_t>& request_of_seq,
                      const std::vector<int32_t>& cu, const uint8_t* k, const uint8_t* v,
                      size_t k_row_bytes, size_t v_row_bytes, bool mla) {
  for (size_t b = 0; b < request_of_seq.size(); ++b) {
    auto& kr = sh.k[request_of_seq[b]];
    kr.insert(kr.end(), k + size_t(cu[b]) * k_row_bytes, k + size_t(cu[b + 1]) * k_row_bytes);
    if (mla) continue;
    auto& vr = sh.v[request_of_seq[b]];
    vr.insert(vr.end(), v + size_t(cu[b]) * v_row_bytes, v + size_t(cu[b + 1]) * v_row_bytes);
  }
}

// The most (query row, key, query head) triples a verified run hands the fp64 oracle: a longer
// causal step is checked on every n-th row of each sequence, its last row included, each such row
// as a sequence of its own over the keys up to its position (what causality lets it see: windows,
// chunks and ALiBi keep their distances). A 4096-token prefill step of Llama-4-Scout over 9000
// keys took the oracle minutes on the H200 host; its rows are independent, so a sample of them
// checks the kernel on every key it reads for them.
constexpr double kVerifyWork = double(1 << 24);

// Runs CPU_REFERENCE for the layer run `a` (device pointers) over `cache`, a host copy of the
// keys the run read, and folds the comparison with the run's output into the group's report.
void verify_run(const AttentionArgs& a, const AttentionBatch& host_batch, const ShadowCache& cache,
                RunMemory& mem, AttentionBackend& reference, size_t q_bytes, size_t out_elems,
                GroupRunReport& g, RunReport& report) {
  const DType adt = a.layer.dtype;
  const size_t ebytes = size_t(dtype_bytes(adt));
  const size_t out_bytes = out_elems * ebytes;
  std::vector<uint8_t> q_host(q_bytes), out_host(out_bytes);
  mem.copy_to_host(q_host.data(), a.q, q_bytes);
  mem.copy_to_host(out_host.data(), a.out, out_bytes);
  AttentionArgs r = a;
  std::vector<float> alibi_h, sinks_h;
  const size_t heads = size_t(a.layer.num_heads);
  if (a.layer.alibi_slopes) {
    alibi_h.resize(heads);
    mem.copy_to_host(alibi_h.data(), a.layer.alibi_slopes, heads * 4);
    r.layer.alibi_slopes = alibi_h.data();
  }
  if (a.layer.sinks) {
    sinks_h.resize(heads);
    mem.copy_to_host(sinks_h.data(), a.layer.sinks, heads * 4);
    r.layer.sinks = sinks_h.data();
  }
  r.lse = nullptr;
  r.kv = cache.view;
  r.workspace = nullptr;
  r.batch = host_batch;
  r.batch.block_table = cache.block_table.data();
  r.batch.block_table_stride = 1;
  const AttentionBatch& b = host_batch;
  const int rows = b.cu_seqlens_q[b.num_seqs] - b.cu_seqlens_q[0];
  if (rows == 0) return;
  const size_t q_row = q_bytes / size_t(rows), out_row = out_elems / size_t(rows);
  double work = 0;
  for (int s = 0; s < b.num_seqs; ++s)
    work += double(b.cu_seqlens_q[s + 1] - b.cu_seqlens_q[s]) * b.seqused_k[s] * double(heads);
  // The rows checked (tokens of the run), and the reference's batch of them when sampled.
  std::vector<int32_t> tokens, cu{0}, used, table;
  std::vector<uint8_t> q_sub;
  const int every = a.layer.causal && !b.mm_prefix_offsets && work > kVerifyWork
                        ? int(std::ceil(work / kVerifyWork))
                        : 1;
  if (every == 1) {
    tokens.resize(size_t(rows));
    std::iota(tokens.begin(), tokens.end(), b.cu_seqlens_q[0]);
    r.q = q_host.data();
  } else {
    for (int s = 0; s < b.num_seqs; ++s) {
      const int q0 = b.cu_seqlens_q[s], q = b.cu_seqlens_q[s + 1] - q0;
      const size_t first = tokens.size();
      for (int t = q - 1; t >= 0; t -= every) tokens.push_back(q0 + t);
      std::reverse(tokens.begin() + ptrdiff_t(first), tokens.end());
      for (size_t i = first; i < tokens.size(); ++i) {
        const int pos = b.seqused_k[s] - q + (tokens[i] - q0);  // the row's key position
        cu.push_back(cu.back() + 1);
        used.push_back(std::max(0, pos + 1));
        table.push_back(cache.block_table[size_t(s)]);
      }
    }
    q_sub.resize(tokens.size() * q_row);
    for (size_t i = 0; i < tokens.size(); ++i)
      std::memcpy(q_sub.data() + i * q_row,
                  q_host.data() + size_t(tokens[i] - b.cu_seqlens_q[0]) * q_row, q_row);
    r.q = q_sub.data();
    r.batch.num_seqs = int(tokens.size());
    r.batch.total_q = int(tokens.size());
    r.batch.max_seqlen_q = 1;
    r.batch.max_seqlen_k = *std::max_element(used.begin(), used.end());
    r.batch.cu_seqlens_q = cu.data();
    r.batch.seqused_k = used.data();
    r.batch.block_table = table.data();
  }
  std::vector<uint8_t> ref_out(tokens.size() * out_row * ebytes);
  r.out = ref_out.data();
  reference.plan(r.batch, r.layer);
  reference.run(r);
  double max_err = 0, max_ref = 0;
  for (size_t i = 0; i < tokens.size(); ++i)
    for (size_t e = 0; e < out_row; ++e) {
      const double x =
          decode_element(out_host.data(), adt, size_t(tokens[i] - b.cu_seqlens_q[0]) * out_row + e);
      const double y = decode_element(ref_out.data(), adt, i * out_row + e);
      max_ref = std::max(max_ref, std::isfinite(y) ? std::fabs(y) : INFINITY);
      // NaN or inf on either side fails (std::max would drop a NaN).
      max_err =
          std::max(max_err, std::isfinite(x) && std::isfinite(y) ? std::fabs(x - y) : INFINITY);
    }
  const double tol = tolerance_for(adt, max_ref);
  g.verified_layers += 1;
  g.verified_rows_of += rows;
  g.verified_rows += int64_t(tokens.size());
  g.max_abs_error = std::max(g.max_abs_error, max_err);
  g.tolerance = std::max(g.tolerance, tol);
  if (!(max_err <= tol)) g.verified_ok = false;
  report.verified = true;
}

// fp8 scales (value / scale stored), per tensor or per KV head, of a layer whose K/V the run writes
// in the contiguous form (no cache storage holds them).
void init_contiguous_scales(LayerRun& L, RunMemory& mem) {
  const LayerSpec& s = *L.spec;
  const ScaleGranularity sg = s.kv_scale_granularity;
  if (sg != ScaleGranularity::kPerTensor && sg != ScaleGranularity::kPerHead) return;
  L.contiguous_scales_host.assign(sg == ScaleGranularity::kPerHead ? size_t(s.num_kv_heads) : 1,
                                  kFp8Scale);
  L.contiguous_scales = Buffer(mem, L.contiguous_scales_host.size() * 4);
  mem.copy_from_host(L.contiguous_scales.get(), L.contiguous_scales_host.data(),
                     L.contiguous_scales_host.size() * 4);
}

// Buffers of bidirectional passes over whole prompts in the cu_seqlens_k form: each sequence's
// K/V are the step's own rows, contiguous (written through the backend's KV write into that
// layout, then read as docs/semantics.md §2 describes it), no paged cache.
struct ContiguousPass {
  int max_seqs = 0;
  Buffer kv_dev;  // the step's K/V in the layer's storage format
  Buffer cu_dev, used_dev, slots_dev;

  ContiguousPass(RunMemory& mem, const std::vector<LayerRun>& layers, int max_seqs_, int len)
      : max_seqs(max_seqs_) {
    const size_t max_tokens = size_t(max_seqs) * size_t(len);
    size_t max_kv = 0;
    for (const LayerRun& lr : layers) {
      const LayerSpec& s = *lr.spec;
      if (s.attn_type != AttentionType::kEncoder && s.attn_type != AttentionType::kEncoderOnly)
        continue;
      const KvCacheView v = contiguous_kv_view(s.resolved_kv_dtype(), s.dtype, int(max_tokens),
                                               s.num_kv_heads, s.head_size, s.head_size_v, 1);
      max_kv =
          std::max(max_kv, size_t(v.stride_token + v.v_stride_token + v.sb_token + v.v_sb_token));
    }
    kv_dev = Buffer(mem, max_tokens * max_kv);
    cu_dev = Buffer(mem, (size_t(max_seqs) + 1) * 4);
    used_dev = Buffer(mem, size_t(max_seqs) * 4);
    slots_dev = Buffer(mem, max_tokens * 8);
    std::vector<int64_t> slots(max_tokens);
    std::iota(slots.begin(), slots.end(), 0);  // row t of the contiguous K/V
    mem.copy_from_host(slots_dev.get(), slots.data(), slots.size() * 8);
  }
};

// The host batch of `n` whole prompts of `len` tokens (cu and used hold its metadata) and its
// device copy in `c`.
AttentionBatch contiguous_batch(ContiguousPass& c, RunMemory& mem, int n, int len,
                                std::vector<int32_t>& cu, std::vector<int32_t>& used) {
  if (n > c.max_seqs)
    throw Error(
        fmt::format("a contiguous pass of {} prompts outgrew its buffers ({})", n, c.max_seqs));
  cu.resize(size_t(n) + 1);
  used.assign(size_t(n), len);
  for (int i = 0; i <= n; ++i) cu[size_t(i)] = i * len;
  AttentionBatch hb;
  hb.num_seqs = n;
  hb.total_q = n * len;
  hb.max_seqlen_q = hb.max_seqlen_k = len;
  hb.cu_seqlens_q = cu.data();
  hb.seqused_k = used.data();
  hb.block_table = cu.data();  // the cu_seqlens_k form: sequence s's block starts at its row
  hb.block_table_stride = 1;
  mem.copy_from_host(c.cu_dev.get(), cu.data(), cu.size() * 4);
  mem.copy_from_host(c.used_dev.get(), used.data(), used.size() * 4);
  return hb;
}

// Elements of the widest token row of q, K, V or out over the model's layers.
size_t max_q_elems(const ModelSpec& model) {
  size_t m = 0;
  for (const auto& l : model.attention_layers)
    m = std::max(m, size_t(l.num_heads) * size_t(std::max(l.head_size, l.head_size_v)));
  return m;
}

// Device buffers for one layer run's token rows (q, new K and V, out).
struct RowBuffers {
  Buffer q, k, v, out;
};

RowBuffers row_buffers(RunMemory& mem, const ModelSpec& model, DType adt, size_t max_tokens) {
  const size_t bytes = max_tokens * max_q_elems(model) * size_t(dtype_bytes(adt));
  return {Buffer(mem, bytes), Buffer(mem, bytes), Buffer(mem, bytes), Buffer(mem, bytes)};
}

// One layer's bidirectional pass over the whole prompts of `hb` (contiguous_batch): K/V rows
// written, the attention timed and counted, and verified against CPU_REFERENCE when asked.
void run_contiguous_layer(LayerRun& lr, SigGroup& g, const AttentionBatch& hb, ContiguousPass& c,
                          RowBuffers& rb, const ActivationPool& pool, RunMemory& mem,
                          AttentionBackend& reference, uint64_t key, bool verify,
                          RunReport& report) {
  const LayerSpec& s = *lr.spec;
  const size_t ebytes = size_t(dtype_bytes(s.dtype));
  const int n = hb.num_seqs, L = hb.max_seqlen_q;
  const size_t nq = size_t(hb.total_q);
  const size_t q_elems = nq * size_t(s.num_heads) * size_t(s.head_size);
  const size_t k_elems = nq * size_t(s.num_kv_heads) * size_t(s.head_size);
  const size_t v_elems = nq * size_t(s.num_kv_heads) * size_t(s.head_size_v);
  mem.copy_from_host(rb.q.get(), pool.slice(q_elems, key + 1), q_elems * ebytes);
  mem.copy_from_host(rb.k.get(), pool.slice(k_elems, key + 2), k_elems * ebytes);
  mem.copy_from_host(rb.v.get(), pool.slice(v_elems, key + 3), v_elems * ebytes);
  // The rows' storage: K, V, then the nvfp4 block scales of each, row after row.
  KvCacheView view = contiguous_kv_view(s.resolved_kv_dtype(), s.dtype, int(nq), s.num_kv_heads,
                                        s.head_size, s.head_size_v, 1);
  auto* base = static_cast<uint8_t*>(c.kv_dev.get());
  view.k = base;
  view.v = base + int64_t(nq) * view.stride_token;
  if (view.sb_token) {
    view.k_block_scales = base + int64_t(nq) * (view.stride_token + view.v_stride_token);
    view.v_block_scales = view.k_block_scales + int64_t(nq) * view.sb_token;
  }
  view.scale_granularity = s.kv_scale_granularity;
  if (lr.contiguous_scales.get())
    view.k_scale = view.v_scale = static_cast<const float*>(lr.contiguous_scales.get());
  g.backend->write_kv(token_rows_write(s, rb.k.get(), rb.v.get(), nq,
                                       static_cast<const int64_t*>(c.slots_dev.get()), view),
                      mem.stream());

  AttentionArgs a =
      token_rows_args(s, rb.q.get(), rb.out.get(), view, hb, lr.params, g.workspace.get());
  a.kv.block_size = L;
  a.batch.cu_seqlens_q = static_cast<const int32_t*>(c.cu_dev.get());
  a.batch.seqused_k = static_cast<const int32_t*>(c.used_dev.get());
  a.batch.block_table = static_cast<const int32_t*>(c.cu_dev.get());
  const size_t out_elems = nq * size_t(s.num_heads) * size_t(s.head_size_v);
  timed_run(*g.backend, a, out_elems * ebytes, mem, g.report);

  // Work required: each query's visible keys (a window limits both sides), each K/V row once.
  const int wl = lr.params.window_left, wr = lr.params.window_right;
  double pairs = 0;
  for (int p = 0; p < L; ++p)
    pairs += (wr >= 0 ? std::min(L - 1, p + wr) : L - 1) - (wl >= 0 ? std::max(0, p - wl) : 0) + 1;
  g.report.flops += 2.0 * s.num_heads * (s.head_size + s.head_size_v) * pairs * n;
  g.report.kv_bytes += double(nq) * double(view.stride_token + view.v_stride_token + view.sb_token +
                                           view.v_sb_token);

  if (!verify) return;
  // The reference reads the same rows as a plain cache of one block per request, written by the
  // CPU KV write from the host activations.
  ShadowKv rows;
  rows.k.resize(size_t(n));
  rows.v.resize(size_t(n));
  std::vector<size_t> seq_of_row(rows.k.size());
  std::iota(seq_of_row.begin(), seq_of_row.end(), 0);
  const std::vector<int32_t> cu(hb.cu_seqlens_q, hb.cu_seqlens_q + n + 1),
      used(hb.seqused_k, hb.seqused_k + n);
  append_step_rows(rows, seq_of_row, cu, static_cast<const uint8_t*>(pool.slice(k_elems, key + 2)),
                   static_cast<const uint8_t*>(pool.slice(v_elems, key + 3)), k_elems / nq * ebytes,
                   v_elems / nq * ebytes, false);
  const ShadowCache sc = build_shadow_cache(rows, seq_of_row, used, s, view.scale_granularity,
                                            lr.contiguous_scales_host, lr.contiguous_scales_host);
  verify_run(a, hb, sc, mem, reference, q_elems * ebytes, out_elems, g.report, report);
}

// Encoder-only models (BERT-style embedders): each request is one bidirectional pass over its
// prompt (run_contiguous_layer), no decode. A step packs whole prompts within the token budget.
RunReport run_encoder_only(const RunOptions& o, const ModelSpec& model, const DeviceInfo& device,
                           RunMemory& mem, std::vector<SigGroup>& groups,
                           std::vector<LayerRun>& layers, Clock::time_point t_start) {
  if (o.prompt_len > o.max_tokens_per_step)
    throw InvalidArgument(fmt::format(
        "model {} is encoder-only: a prompt is one bidirectional pass, so a step cannot split "
        "it; the step budget (--max-tokens-per-step, {}) must be >= --prompt-len ({})",
        model.name, o.max_tokens_per_step, o.prompt_len));
  RunReport report;
  report.model = model.name;
  report.dtype = model.dtype;
  report.device = describe(device);
  report.kv_notes.push_back(
      "encoder-only model: each request is one bidirectional pass over contiguous K/V (the "
      "cu_seqlens_k form); no paged cache and no decode steps");

  std::mt19937_64 rng(o.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (LayerRun& L : layers) {
    L.kv_group = -1;
    init_layer_params(L, mem, rng, normal);
    init_contiguous_scales(L, mem);
  }
  for (auto& g : groups) {
    g.report.backend = g.sel.backend;
    g.report.variant = g.sel.variant;
    g.report.num_layers = int(g.layers.size());
    g.report.kv_group = -1;
    g.report.description = describe_group(g, layers, 0);
  }

  const int L = o.prompt_len;
  const int per_step = std::max(1, o.max_tokens_per_step / L);
  const int max_seqs = std::min(per_step, o.requests);
  const size_t max_tokens = size_t(max_seqs) * size_t(L);
  const DType adt = model.attention_layers.front().dtype;
  RowBuffers rb = row_buffers(mem, model, adt, max_tokens);
  ActivationPool pool(adt, std::max<size_t>(size_t(1) << 22, max_tokens * max_q_elems(model) + 1),
                      o.seed ^ 0x5eed);
  ContiguousPass c(mem, layers, max_seqs, L);
  std::unique_ptr<AttentionBackend> reference = make_cpu_reference_backend();

  const int total_steps = (o.requests + per_step - 1) / per_step;
  for (int first = 0, step = 0; first < o.requests; first += per_step, ++step) {
    const int n = std::min(per_step, o.requests - first);
    std::vector<int32_t> cu, used;
    const AttentionBatch hb = contiguous_batch(c, mem, n, L, cu, used);
    for (auto& g : groups) {
      g.backend->plan(hb, layers[g.layers.front()].params);
      if (g.backend->workspace_bytes() > g.workspace.bytes())
        g.workspace = Buffer(mem, g.backend->workspace_bytes());
    }
    const bool verify_step = o.verify && (step == 0 || step + 1 == total_steps);
    for (size_t li = 0; li < layers.size(); ++li) {
      SigGroup& g = groups[layers[li].group];
      const bool first_of_group = li == g.layers.front();
      run_contiguous_layer(layers[li], g, hb, c, rb, pool, mem, *reference,
                           (uint64_t(step) << 32) ^ (uint64_t(li) << 4),
                           verify_step && first_of_group, report);
      if (first_of_group) g.report.query_tokens += hb.total_q;
    }
    report.prefill_tokens += hb.total_q;
    ++report.prefill_steps;
    report.steps = step + 1;
    if (o.progress) o.progress(step + 1, total_steps, hb.total_q, 0);
  }
  for (auto& g : groups) report.groups.push_back(g.report);
  report.wall_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  return report;
}

}  // namespace

bool RunReport::ok() const {
  return std::all_of(groups.begin(), groups.end(),
                     [](const GroupRunReport& g) { return g.verified_ok; });
}

RunReport run_workload(const RunOptions& o) {
  if (o.requests < 1 || o.prompt_len < 1 || o.decode_steps < 0 || o.max_tokens_per_step < 1)
    throw InvalidArgument(fmt::format(
        "run needs requests >= 1, prompt-len >= 1, decode-steps >= 0 and a step budget >= 1; "
        "got {}, {}, {}, {}",
        o.requests, o.prompt_len, o.decode_steps, o.max_tokens_per_step));
  const auto t_start = Clock::now();

  const DeviceInfo device = device_from_name(o.device);
  if (device.platform != Platform::kCpu && device.platform != Platform::kCuda)
    throw Unsupported(fmt::format("attnkit run executes on cpu or cuda; device {} is {}",
                                  device.name, to_string(device.platform)));
  if (!device.detected && device.preset != "cpu")
    throw InvalidArgument(fmt::format(
        "device '{}' is a preset for planning; run needs real hardware (auto, cpu or cuda)",
        o.device));

  ModelLoadOptions load;
  load.dtype = o.dtype;
  load.runner = o.runner;
  load.dtype_rule = [&device](const ModelDtypeQuery& q) {
    return resolve_model_dtype(native_catalog(), device, q);
  };
  load.kv_cache_dtype = o.kv_cache_dtype;
  load.kv_cache_dtype_skip_layers = o.kv_cache_dtype_skip_layers;
  load.block_size = o.block_size;
  const ModelSpec model = load_model(o.model, load);
  // Encoder-decoder models (T5, BART, Whisper): a request's prompt is its encoder input, one
  // bidirectional pass of the encoder layers when the request is admitted (contiguous K/V, as
  // encoder-only models). Its cross-attention layers write that many K/V rows once, into the cross
  // group's blocks, and every decoder token attends to all of them; the decoder starts from its
  // prompt (--decoder-prompt-len, 1: the start token; Whisper's are about 4) and decodes
  // --decode-steps more.
  const bool enc_dec = model.is_encoder_decoder;
  if (o.decoder_prompt_len && (!enc_dec || *o.decoder_prompt_len < 1))
    throw InvalidArgument(
        enc_dec ? fmt::format("--decoder-prompt-len must be >= 1, got {}", *o.decoder_prompt_len)
                : fmt::format("--decoder-prompt-len applies to encoder-decoder models; {} is a "
                              "decoder-only model (its prompt is --prompt-len)",
                              model.name));
  const int enc_len = enc_dec ? o.prompt_len : 0;
  const int dec_prompt = enc_dec ? o.decoder_prompt_len.value_or(1) : o.prompt_len;
  // A pooling model's request ends with its prefill (vLLM pools the prompt's hidden states).
  const int decode_steps = model.pooling ? 0 : o.decode_steps;
  const int64_t total_len = int64_t(dec_prompt) + decode_steps;
  if (model.max_position_embeddings > 0 && total_len > model.max_position_embeddings)
    throw InvalidArgument(
        enc_dec ? fmt::format("model {} decodes at most {} positions (max_position_embeddings); "
                              "the decoder's prompt {} + decode-steps {} = {} exceed it",
                              model.name, model.max_position_embeddings, dec_prompt, decode_steps,
                              total_len)
                : fmt::format("model {} takes at most {} positions (max_position_embeddings); "
                              "prompt-len {} + decode-steps {} = {} exceeds it",
                              model.name, model.max_position_embeddings, o.prompt_len, decode_steps,
                              total_len));
  const int64_t max_encoder =
      model.max_encoder_positions > 0 ? model.max_encoder_positions : model.max_position_embeddings;
  if (enc_dec && max_encoder > 0 && enc_len > max_encoder)
    throw InvalidArgument(fmt::format(
        "model {} takes encoder inputs of at most {} tokens ({}); prompt-len {} "
        "exceeds it",
        model.name, max_encoder,
        model.max_encoder_positions > 0 ? "max_source_positions" : "max_position_embeddings",
        o.prompt_len));
  if (enc_dec && o.prompt_len > o.max_tokens_per_step)
    throw InvalidArgument(fmt::format(
        "model {} is an encoder-decoder model: a prompt is one bidirectional encoder pass, so a "
        "step cannot split it; the step budget (--max-tokens-per-step, {}) must be >= "
        "--prompt-len ({})",
        model.name, o.max_tokens_per_step, o.prompt_len));
  const bool encoder_only =
      !model.attention_layers.empty() &&
      std::all_of(model.attention_layers.begin(), model.attention_layers.end(),
                  [](const LayerSpec& l) { return l.attn_type == AttentionType::kEncoderOnly; });
  if (model.attention_layers.empty())
    throw Unsupported(fmt::format("model {} has no attention layers to run", model.name));
  // PrefixLM models: each prompt opens with one image, positions [0, image) of every mm_prefix
  // layer's batch attend to each other bidirectionally. A prefill chunk never ends inside it (a
  // query there needs the image's later keys), so one step must hold the whole image.
  const int image = std::min(model.mm_item_tokens, o.prompt_len);
  if (image > o.max_tokens_per_step)
    throw InvalidArgument(fmt::format(
        "model {} opens each prompt with a {}-token image whose tokens attend to each other "
        "bidirectionally, so a prefill chunk cannot split it: the step budget "
        "(--max-tokens-per-step, {}) must be >= {}",
        model.name, image, o.max_tokens_per_step, image));

  std::unique_ptr<RunMemory> mem =
      device.platform == Platform::kCuda ? make_cuda_memory() : make_host_memory();

  // Selection: one per distinct layer signature, through the native catalog.
  SelectOptions sopt;
  sopt.backend = resolve_requested_backend(o.backend);
  sopt.variant = o.variant;
  Selector selector(native_catalog(), device, sopt);
  std::vector<SigGroup> groups;
  std::map<std::string, size_t> group_of_sig;
  std::vector<std::vector<const Capabilities*>> caps_per_layer;
  std::vector<LayerRun> layers(model.attention_layers.size());
  for (size_t i = 0; i < model.attention_layers.size(); ++i) {
    const LayerSpec& spec = model.attention_layers[i];
    const Selection& sel = selector.select(spec);
    auto [it, fresh] = group_of_sig.emplace(spec.signature(), groups.size());
    if (fresh) {
      SigGroup g;
      g.sel = sel;
      g.backend = make_backend(sel.backend, spec, device, sel.variant);
      groups.push_back(std::move(g));
    }
    groups[it->second].layers.push_back(i);
    layers[i].spec = &spec;
    layers[i].group = it->second;
    caps_per_layer.push_back({&native_catalog().find(sel.backend)->caps});
  }
  if (encoder_only) return run_encoder_only(o, model, device, *mem, groups, layers, t_start);

  // KV cache: plan, size it for the workload (or the budget), allocate.
  KvPlanOptions kopt;
  kopt.block_size = o.block_size;
  kopt.max_tokens_per_step = o.max_tokens_per_step;
  kopt.max_model_len =
      model.max_position_embeddings > 0 ? model.max_position_embeddings : total_len;
  kopt.max_encoder_len = enc_len;
  const KvPlan plan = plan_kv_cache(model, caps_per_layer, kopt);
  // A request's blocks are allocated chunk by chunk as the schedule reaches its tokens, and a
  // sliding group releases the blocks below the window before each chunk: every request at its
  // peak at once, plus the null block.
  const int64_t chunk = std::min<int64_t>(dec_prompt, o.max_tokens_per_step);
  const int64_t needed = plan.peak_blocks(total_len, chunk, enc_len) * o.requests + 1;
  int64_t num_blocks = needed + needed / 8 + 1;
  if (o.memory_bytes) {
    num_blocks = plan.blocks_for_memory(*o.memory_bytes);
    if (num_blocks < needed)
      throw OutOfMemory(fmt::format(
          "KV budget of {} bytes holds {} blocks of {} bytes; {} requests of {} tokens in "
          "prefill chunks of up to {} need {}",
          *o.memory_bytes, num_blocks, plan.bytes_per_block, o.requests, total_len, chunk, needed));
  }
  check_kv_fits(*mem, num_blocks, plan.bytes_per_block, plan.scale_bytes);
  KvCacheStorage storage(plan, num_blocks, *mem);
  KvManagerOptions mopt;
  mopt.enable_prefix_caching = false;  // random activations are not a function of token ids
  KvCacheManager manager(plan, num_blocks, mopt);

  RunReport report;
  report.model = model.name;
  report.dtype = model.dtype;
  report.device = describe(device);
  report.kv_blocks_total = num_blocks;
  report.kv_bytes_allocated = uint64_t(num_blocks) * uint64_t(plan.bytes_per_block);
  report.zeroing_on = plan.needs_zeroing;
  report.kv_notes = plan.notes;
  if (model.pooling)
    report.kv_notes.push_back(fmt::format(
        "pooling model ({}): each request ends with its prefill, no decode step{}",
        model.runner_reason,
        o.decode_steps > 0 ? fmt::format(" (--decode-steps {} not run)", o.decode_steps) : ""));
  report.state_layers = int(model.state_layers.size());

  std::mt19937_64 rng(o.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerRun& L = layers[i];
    const LayerSpec& s = *L.spec;
    init_layer_params(L, *mem, rng, normal);
    if (s.attn_type == AttentionType::kEncoder) {  // no cache: the step's contiguous K/V
      L.kv_group = -1;
      L.kv_root = s.layer_index;
      init_contiguous_scales(L, *mem);
      continue;
    }
    const KvLayerSpec& ks = plan.layer(s.layer_index);
    L.kv_root = ks.shares_with.value_or(s.layer_index);
    L.writes_kv = !ks.shares_with;
    L.kv_group = plan.group_of_layer(L.kv_root).group_id;
    if (L.writes_kv && ks.scale_granularity != ScaleGranularity::kNone &&
        ks.dtype != KvCacheDType::kNvfp4) {
      const size_t n =
          ks.scale_granularity == ScaleGranularity::kPerHead ? size_t(ks.num_kv_heads) : 1;
      std::vector<float> k(n, kFp8Scale), v(s.is_mla() ? 0 : n, kFp8Scale);
      storage.set_scales(s.layer_index, k, v);
    }
    L.view = storage.view(s.layer_index);
  }
  for (auto& g : groups) {
    const LayerRun& first = layers[g.layers.front()];
    g.report.backend = g.sel.backend;
    g.report.variant = g.sel.variant;
    g.report.num_layers = int(g.layers.size());
    g.report.kv_group = first.kv_group;
    if (first.kv_group >= 0)
      g.report.kernel_block_size = plan.groups[size_t(first.kv_group)].kernel_block_size;
    g.report.description = describe_group(g, layers, image);
  }

  // Fresh blocks are zeroed before the pass that uses them (state pages of hybrid models, or
  // whatever the plan says needs it): their whole page in every tensor, so any kernel-block split,
  // storage format and state page is covered. On the GPU one kernel launch per step.
  std::unique_ptr<BlockZeroer> zeroer;
  if (mem->is_host()) {
    zeroer = std::make_unique<HostBlockZeroer>(storage);
  } else {
    std::vector<void*> tensors;
    for (int j = 0; j < storage.num_tensors(); ++j) tensors.push_back(storage.tensor(j));
    zeroer = make_cuda_page_zeroer(std::move(tensors), storage.plan().page_bytes,
                                   int(storage.num_blocks()), mem->stream());
  }
  auto zero_fresh = [&]() {
    std::vector<int32_t> ids = manager.pool().take_blocks_to_zero();
    if (ids.empty() || !manager.pool().zero_fresh_blocks()) return;
    zeroer->zero_blocks(ids);
    report.kv_blocks_zeroed += int64_t(ids.size());
  };

  // Requests and their prompts (random token ids: prefix caching is off). Each enters the
  // manager with its first chunk.
  std::vector<Seq> seqs;
  std::vector<std::vector<int32_t>> prompts;
  std::uniform_int_distribution<int32_t> token(1, 32000);
  for (int r = 0; r < o.requests; ++r) {
    std::vector<int32_t>& prompt = prompts.emplace_back(size_t(dec_prompt));
    for (auto& t : prompt) t = token(rng);
    seqs.push_back({r, dec_prompt, 0, 0});
  }

  // A step's rows: its scheduled tokens, or the encoder input of the requests it admits.
  const size_t max_tokens = size_t(std::max(o.max_tokens_per_step, o.requests));
  const DType adt = model.attention_layers.front().dtype;
  ActivationPool pool(adt, std::max<size_t>(size_t(1) << 22, max_tokens * max_q_elems(model) + 1),
                      o.seed ^ 0x5eed);
  const size_t ebytes = size_t(dtype_bytes(adt));
  RowBuffers rb = row_buffers(*mem, model, adt, max_tokens);
  Buffer cu_dev(*mem, (seqs.size() + 1) * 4), used_dev(*mem, seqs.size() * 4);
  Buffer mm_off_dev(*mem, (seqs.size() + 1) * 4), mm_rng_dev(*mem, seqs.size() * 8);
  Buffer cross_used_dev(*mem, seqs.size() * 4);
  // Encoder passes of the requests a step admits (encoder-decoder models).
  const int max_admitted = enc_dec ? std::min(o.requests, o.max_tokens_per_step / enc_len) : 0;
  std::optional<ContiguousPass> encoder_pass;
  if (enc_dec) encoder_pass.emplace(*mem, layers, max_admitted, enc_len);
  std::unique_ptr<AttentionBackend> reference = make_cpu_reference_backend();

  const int total_steps = count_steps(seqs, o.max_tokens_per_step, image, decode_steps, enc_len);
  // Step metadata buffers, sized once for the largest step.
  std::vector<KvGroupStep> kvg(plan.groups.size());
  for (const auto& g : plan.groups) {
    const int64_t len = g.kind == KvSpecKind::kCrossAttention ? enc_len : total_len;
    const int64_t kernel_blocks =
        (len + g.manager_block_size - 1) / g.manager_block_size * g.ratio();
    kvg[size_t(g.group_id)].block_table_dev = Buffer(*mem, size_t(kernel_blocks * o.requests) * 4);
    kvg[size_t(g.group_id)].slots_dev = Buffer(*mem, max_tokens * 8);
  }
  // Host copies of the K/V rows the verified layers' caches received (see ShadowKv).
  std::map<int, ShadowKv> shadows;  // by the layer that owns the cache
  if (o.verify)
    for (const auto& g : groups)
      if (layers[g.layers.front()].kv_group >= 0)
        shadows[layers[g.layers.front()].kv_root].k.resize(seqs.size());
  for (auto& [root, sh] : shadows) sh.v.resize(seqs.size());

  int step = 0;
  bool last_prefill_verified = false;
  while (true) {
    const std::vector<StepSeq> batch =
        schedule_step(seqs, o.max_tokens_per_step, image, decode_steps, enc_len);
    if (batch.empty()) break;
    // The requests this step admits (their encoder passes and cross K/V writes), as batch rows.
    std::vector<size_t> admitted;
    if (enc_dec)
      for (size_t b = 0; b < batch.size(); ++b)
        if (seqs[batch[b].seq].processed == 0) admitted.push_back(b);
    int prefill_tokens = 0, decode_tokens = 0;
    for (const auto& b : batch) {
      const Seq& s = seqs[b.seq];
      if (s.processed >= s.prompt_len) {
        manager.append_tokens(s.id, std::vector<int32_t>{token(rng)});
        ++decode_tokens;
        continue;
      }
      const std::span<const int32_t> part(prompts[b.seq].data() + s.processed, size_t(b.q_len));
      if (s.processed == 0)
        manager.add_request(s.id, part, enc_len);
      else
        manager.append_tokens(s.id, part);
      prefill_tokens += b.q_len;
    }
    zero_fresh();
    report.kv_blocks_peak_used = std::max(report.kv_blocks_peak_used, manager.pool().num_used());

    // Metadata shared by every layer, and per KV group block tables and slots.
    AttentionBatch hb;
    std::vector<int32_t> cu(batch.size() + 1, 0), used(batch.size());
    for (size_t b = 0; b < batch.size(); ++b) {
      cu[b + 1] = cu[b] + batch[b].q_len;
      used[b] = int32_t(batch[b].q_start + batch[b].q_len);
      hb.max_seqlen_q = std::max(hb.max_seqlen_q, batch[b].q_len);
      hb.max_seqlen_k = std::max(hb.max_seqlen_k, used[b]);
    }
    hb.num_seqs = int(batch.size());
    hb.total_q = cu.back();
    hb.cu_seqlens_q = cu.data();
    hb.seqused_k = used.data();
    // The step's KV write writes only its own tokens' rows (docs/semantics.md §7).
    hb.earlier_rows_settled = true;
    mem->copy_from_host(cu_dev.get(), cu.data(), cu.size() * 4);
    mem->copy_from_host(used_dev.get(), used.data(), used.size() * 4);
    // Cross-attention: the same queries over each request's encoder_len keys; the rows written
    // are the admitted requests' (enc_cu: their offsets), from request_of_admitted. Those encoder
    // rows, written in this step, sit below the decoder rows: not settled.
    AttentionBatch hb_cross = hb;
    hb_cross.earlier_rows_settled = false;
    std::vector<int32_t> cross_used(batch.size(), enc_len), enc_cu{0};
    std::vector<size_t> request_of_admitted;
    if (enc_dec) {
      hb_cross.seqused_k = cross_used.data();
      hb_cross.max_seqlen_k = enc_len;
      mem->copy_from_host(cross_used_dev.get(), cross_used.data(), cross_used.size() * 4);
      for (size_t b : admitted) {
        enc_cu.push_back(enc_cu.back() + enc_len);
        request_of_admitted.push_back(batch[b].seq);
      }
    }
    std::vector<int32_t> enc_pass_cu, enc_pass_used;
    const AttentionBatch hb_enc = admitted.empty()
                                      ? AttentionBatch{}
                                      : contiguous_batch(*encoder_pass, *mem, int(admitted.size()),
                                                         enc_len, enc_pass_cu, enc_pass_used);
    // Every sequence's image range (its chunks cover it whole: see the schedule above).
    std::vector<int32_t> mm_off, mm_rng;
    AttentionBatch hb_mm = hb;  // the host batch of mm_prefix layers
    if (image > 0) {
      for (size_t b = 0; b < batch.size(); ++b) {
        mm_off.push_back(int32_t(b));
        mm_rng.insert(mm_rng.end(), {0, image});
      }
      mm_off.push_back(int32_t(batch.size()));
      hb_mm.mm_prefix_offsets = mm_off.data();
      hb_mm.mm_prefix_ranges = mm_rng.data();
      mem->copy_from_host(mm_off_dev.get(), mm_off.data(), mm_off.size() * 4);
      mem->copy_from_host(mm_rng_dev.get(), mm_rng.data(), mm_rng.size() * 4);
    }
    std::vector<RequestId> ids;
    std::vector<size_t> request_of_seq;  // the batch's sequences' indices into seqs
    for (const auto& b : batch) {
      ids.push_back(seqs[b.seq].id);
      request_of_seq.push_back(b.seq);
    }
    std::vector<bool> filled(plan.groups.size(), false);
    for (const auto& L : layers) {
      if (L.kv_group < 0) continue;
      KvGroupStep& g = kvg[size_t(L.kv_group)];
      if (filled[size_t(L.kv_group)]) continue;
      filled[size_t(L.kv_group)] = true;
      g.stride = 0;
      for (RequestId id : ids)
        g.stride = std::max(g.stride, int(manager.block_table(id, L.kv_group).size()));
      g.block_table.assign(size_t(g.stride) * ids.size(), 0);
      manager.fill_block_tables(ids, L.kv_group, g.block_table.data(), g.stride);
      g.slots.clear();
      if (plan.groups[size_t(L.kv_group)].kind == KvSpecKind::kCrossAttention) {
        for (size_t b : admitted) {  // encoder rows, written once
          auto s = manager.slot_mapping(seqs[batch[b].seq].id, L.kv_group, 0, enc_len);
          g.slots.insert(g.slots.end(), s.begin(), s.end());
        }
      } else {
        for (const auto& b : batch) {
          auto s = manager.slot_mapping(seqs[b.seq].id, L.kv_group, b.q_start, b.q_len);
          g.slots.insert(g.slots.end(), s.begin(), s.end());
        }
      }
      if (g.block_table.size() * 4 > g.block_table_dev.bytes() ||
          g.slots.size() * 8 > g.slots_dev.bytes())
        throw Error(fmt::format("KV group {}: step metadata outgrew its buffers", L.kv_group));
      mem->copy_from_host(g.block_table_dev.get(), g.block_table.data(), g.block_table.size() * 4);
      mem->copy_from_host(g.slots_dev.get(), g.slots.data(), g.slots.size() * 8);
    }
    // Verify on the first step, the last prefill step and the last decode step.
    const bool last_prefill =
        prefill_tokens > 0 && std::all_of(seqs.begin(), seqs.end(), [&](const Seq& s) {
          int64_t chunk = 0;
          for (const auto& b : batch)
            if (&seqs[b.seq] == &s && s.processed < s.prompt_len) chunk = b.q_len;
          return s.processed + chunk >= s.prompt_len;
        });
    const bool last_step = std::all_of(seqs.begin(), seqs.end(), [&](const Seq& s) {
      return s.processed >= s.prompt_len && s.decoded + 1 >= decode_steps;
    });
    const bool verify_step =
        o.verify && (step == 0 || (last_prefill && !last_prefill_verified) || last_step);
    if (last_prefill) last_prefill_verified = true;

    // The host batch of a layer: its queries, keys and masks.
    auto host_batch = [&](const LayerSpec& s) -> const AttentionBatch& {
      return s.attn_type == AttentionType::kEncoder ? hb_enc
             : s.attn_type == AttentionType::kCross ? hb_cross
             : s.mm_prefix                          ? hb_mm
                                                    : hb;
    };
    for (auto& g : groups) {
      const LayerRun& first = layers[g.layers.front()];
      if (first.kv_group < 0 && admitted.empty()) continue;  // encoder layers: no pass this step
      AttentionBatch b = host_batch(*first.spec);
      if (first.kv_group >= 0) {
        b.block_table = kvg[size_t(first.kv_group)].block_table.data();
        b.block_table_stride = kvg[size_t(first.kv_group)].stride;
      }
      g.backend->plan(b, first.params);
      g.report.two_part_steps += cuda_flash_planned_parts(*g.backend) == 2;
      if (g.backend->workspace_bytes() > g.workspace.bytes())
        g.workspace = Buffer(*mem, g.backend->workspace_bytes());
    }
    for (size_t li = 0; li < layers.size(); ++li) {
      LayerRun& L = layers[li];
      SigGroup& g = groups[L.group];
      const LayerSpec& s = *L.spec;
      const uint64_t key = (uint64_t(step) << 32) ^ (uint64_t(li) << 4);
      if (L.kv_group < 0) {  // an encoder layer: the admitted requests' bidirectional passes
        if (admitted.empty()) continue;
        const bool first = li == g.layers.front();
        run_contiguous_layer(L, g, hb_enc, *encoder_pass, rb, pool, *mem, *reference, key,
                             verify_step && first, report);
        if (first) g.report.query_tokens += hb_enc.total_q;
        continue;
      }
      const bool cross = s.attn_type == AttentionType::kCross;
      KvGroupStep& kg = kvg[size_t(L.kv_group)];
      const size_t nq = size_t(hb.total_q);
      const size_t q_elems = nq * size_t(s.num_heads) * size_t(s.head_size);
      mem->copy_from_host(rb.q.get(), pool.slice(q_elems, key + 1), q_elems * ebytes);
      // K/V rows the step writes: its tokens', or (cross) the admitted requests' encoder rows.
      const size_t kv_rows = cross ? size_t(enc_cu.back()) : nq;
      if (L.writes_kv && kv_rows > 0) {
        const size_t k_elems = kv_rows * size_t(s.num_kv_heads) * size_t(s.head_size);
        const size_t v_elems = kv_rows * size_t(s.num_kv_heads) * size_t(s.head_size_v);
        mem->copy_from_host(rb.k.get(), pool.slice(k_elems, key + 2), k_elems * ebytes);
        if (!s.is_mla())
          mem->copy_from_host(rb.v.get(), pool.slice(v_elems, key + 3), v_elems * ebytes);
        g.backend->write_kv(
            token_rows_write(s, rb.k.get(), rb.v.get(), kv_rows,
                             static_cast<const int64_t*>(kg.slots_dev.get()), L.view),
            mem->stream());
        if (auto sh = shadows.find(s.layer_index); sh != shadows.end())
          append_step_rows(sh->second, cross ? request_of_admitted : request_of_seq,
                           cross ? enc_cu : cu,
                           static_cast<const uint8_t*>(pool.slice(k_elems, key + 2)),
                           static_cast<const uint8_t*>(pool.slice(v_elems, key + 3)),
                           k_elems / kv_rows * ebytes, v_elems / kv_rows * ebytes, s.is_mla());
      }
      AttentionArgs a = token_rows_args(s, rb.q.get(), rb.out.get(), L.view, host_batch(s),
                                        L.params, g.workspace.get());
      a.batch.cu_seqlens_q = static_cast<const int32_t*>(cu_dev.get());
      a.batch.seqused_k =
          static_cast<const int32_t*>(cross ? cross_used_dev.get() : used_dev.get());
      a.batch.block_table = static_cast<const int32_t*>(kg.block_table_dev.get());
      a.batch.block_table_stride = kg.stride;
      if (s.mm_prefix && image > 0) {
        a.batch.mm_prefix_offsets = static_cast<const int32_t*>(mm_off_dev.get());
        a.batch.mm_prefix_ranges = static_cast<const int32_t*>(mm_rng_dev.get());
      }
      const size_t out_elems = nq * size_t(s.num_heads) * size_t(s.head_size_v);
      timed_run(*g.backend, a, out_elems * ebytes, *mem, g.report);

      // Work actually required: visible (query, key) pairs and the K/V bytes they span.
      const int64_t tok_bytes = plan.layer(L.kv_root).bytes_per_token();
      for (const auto& b : batch) {
        if (cross) {  // every query sees the request's encoder rows
          g.report.flops +=
              2.0 * s.num_heads * (s.head_size + s.head_size_v) * double(b.q_len) * enc_len;
          g.report.kv_bytes += double(enc_len) * double(tok_bytes);
          continue;
        }
        const int64_t w = s.sliding_window.value_or(0);
        const int c = s.attention_chunk_size.value_or(0);
        const int64_t mm_end = s.mm_prefix ? image : 0;  // queries below it see [0, image)
        auto first_key = [&](int64_t p) {
          const int64_t lo = w && p >= mm_end ? std::max<int64_t>(0, p - w + 1) : 0;
          return c ? std::max(lo, chunk_first_key(p, c)) : lo;
        };
        for (int64_t p = b.q_start; p < b.q_start + b.q_len; ++p) {
          const int64_t hi = p < mm_end ? mm_end - 1 : p;
          g.report.flops +=
              2.0 * s.num_heads * (s.head_size + s.head_size_v) * double(hi - first_key(p) + 1);
        }
        g.report.kv_bytes += double(b.q_start + b.q_len - first_key(b.q_start)) * double(tok_bytes);
      }
      g.report.query_tokens += li == g.layers.front() ? int64_t(nq) : 0;

      if (verify_step && li == g.layers.front()) {
        const KvLayerSpec& root = plan.layer(L.kv_root);
        const bool quantized =
            root.scale_granularity != ScaleGranularity::kNone && root.dtype != KvCacheDType::kNvfp4;
        const ShadowCache sc = build_shadow_cache(
            shadows.at(L.kv_root), request_of_seq, cross ? cross_used : used, s,
            root.scale_granularity, quantized ? storage.k_scales(L.kv_root) : std::vector<float>{},
            quantized && !s.is_mla() ? storage.v_scales(L.kv_root) : std::vector<float>{});
        verify_run(a, host_batch(s), sc, *mem, *reference, q_elems * ebytes, out_elems, g.report,
                   report);
      }
    }
    advance(seqs, batch);
    for (const auto& b : batch) manager.mark_computed(seqs[b.seq].id, seqs[b.seq].processed);
    report.prefill_tokens += prefill_tokens;
    report.decode_tokens += decode_tokens;
    report.encoder_tokens += int64_t(admitted.size()) * enc_len;
    if (prefill_tokens) ++report.prefill_steps;
    ++step;
    if (o.progress) o.progress(step, total_steps, prefill_tokens, decode_tokens);
  }
  for (const auto& s : seqs) manager.free_request(s.id);
  manager.pool().check_invariants();
  report.steps = step;
  for (auto& g : groups) report.groups.push_back(g.report);
  report.wall_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  return report;
}

}  // namespace attnkit
