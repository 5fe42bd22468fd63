#include "backends/cpu_reference/cpu_reference_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/numeric.hpp"
#include "backends/cpu_reference/capabilities.hpp"

namespace attnkit {
namespace {

[[noreturn]] void fail(const std::string& what) { throw InvalidArgument("CPU_REFERENCE: " + what); }

bool is_quantized(KvCacheDType d) {
  return d == KvCacheDType::kFp8E4M3 || d == KvCacheDType::kFp8E5M2 || d == KvCacheDType::kNvfp4;
}

double load_act(const void* base, DType dt, int64_t idx) {
  switch (dt) {
    case DType::kFloat32: {
      float f;
      std::memcpy(&f, static_cast<const char*>(base) + idx * 4, 4);
      return f;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      uint16_t b;
      std::memcpy(&b, static_cast<const char*>(base) + idx * 2, 2);
      return dt == DType::kFloat16 ? fp16_bits_to_float(b) : bf16_bits_to_float(b);
    }
  }
  return 0.0;
}

// double -> float with round-to-odd, so that a second round-to-nearest-even to fp16/bf16 gives
// the correctly rounded result of the double (no double-rounding error).
float to_float_round_odd(double x) {
  float f = static_cast<float>(x);
  if (!std::isfinite(f) || static_cast<double>(f) == x) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(x))
    f = std::nextafter(f, 0.f);  // truncate toward zero
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

void store_act(void* base, DType dt, int64_t idx, double x) {
  char* p = static_cast<char*>(base);
  switch (dt) {
    case DType::kFloat32: {
      float f = static_cast<float>(x);
      std::memcpy(p + idx * 4, &f, 4);
      return;
    }
    case DType::kFloat16: {
      uint16_t b = float_to_fp16_bits(to_float_round_odd(x));
      std::memcpy(p + idx * 2, &b, 2);
      return;
    }
    case DType::kBFloat16: {
      uint16_t b = float_to_bf16_bits(to_float_round_odd(x));
      std::memcpy(p + idx * 2, &b, 2);
      return;
    }
  }
}

// Reads dequantized elements of one cache (K, or V) per docs/semantics.md §2.
struct KvReader {
  const char* data;
  KvCacheDType dtype;
  int64_t s_block, s_head, s_token;
  const float* scale;
  bool per_head;
  const uint8_t* block_scales;
  int64_t sb_block, sb_head, sb_token;

  double tensor_scale(int g) const {
    if (!scale) return 1.0;
    return per_head ? scale[g] : scale[0];
  }

  double at(int64_t block, int g, int o, int d) const {
    const char* row = data + block * s_block + int64_t(g) * s_head + int64_t(o) * s_token;
    switch (dtype) {
      case KvCacheDType::kAuto: {
        float f;
        std::memcpy(&f, row + int64_t(d) * 4, 4);
        return f;
      }
      case KvCacheDType::kFloat16:
      case KvCacheDType::kBFloat16: {
        uint16_t b;
        std::memcpy(&b, row + int64_t(d) * 2, 2);
        return dtype == KvCacheDType::kFloat16 ? fp16_bits_to_float(b) : bf16_bits_to_float(b);
      }
      case KvCacheDType::kFp8E4M3:
        return double(fp8_e4m3_to_float(uint8_t(row[d]))) * tensor_scale(g);
      case KvCacheDType::kFp8E5M2:
        return double(fp8_e5m2_to_float(uint8_t(row[d]))) * tensor_scale(g);
      case KvCacheDType::kNvfp4: {
        const uint8_t byte = uint8_t(row[d / 2]);
        const uint8_t nibble = (d % 2 == 0) ? (byte & 0xf) : (byte >> 4);
        const uint8_t bs =
            block_scales[block * sb_block + int64_t(g) * sb_head + int64_t(o) * sb_token + d / 16];
        return double(e2m1_to_float(nibble)) * double(fp8_e4m3_to_float(bs)) * tensor_scale(g);
      }
    }
    return 0.0;
  }
};

KvReader k_reader(const KvCacheView& kv) {
  return {static_cast<const char*>(kv.k),
          kv.dtype,
          kv.stride_block,
          kv.stride_head,
          kv.stride_token,
          kv.k_scale,
          kv.scale_granularity == ScaleGranularity::kPerHead,
          kv.k_block_scales,
          kv.sb_block,
          kv.sb_head,
          kv.sb_token};
}

KvReader v_reader(const KvCacheView& kv) {
  if (!kv.v) return k_reader(kv);  // MLA: V is the leading part of the K row
  return {static_cast<const char*>(kv.v),
          kv.dtype,
          kv.v_stride_block,
          kv.v_stride_head,
          kv.v_stride_token,
          kv.v_scale,
          kv.scale_granularity == ScaleGranularity::kPerHead,
          kv.v_block_scales,
          kv.sb_block,
          kv.sb_head,
          kv.sb_token};
}

void validate_cache_view(const KvCacheView& kv, DType model, bool need_v) {
  if (!kv.k) fail("kv.k must not be null");
  if (need_v && !kv.v && kv.head_size_v > kv.head_size)
    fail(
        fmt::format("kv.v may be null only when V is the leading part of the K row "
                    "(got head_size_v {} > head_size {})",
                    kv.head_size_v, kv.head_size));
  if (kv.num_blocks < 0) fail(fmt::format("kv.num_blocks must be >= 0 (got {})", kv.num_blocks));
  if (kv.block_size <= 0) fail(fmt::format("kv.block_size must be > 0 (got {})", kv.block_size));
  if (kv.num_kv_heads <= 0 || kv.head_size <= 0 || kv.head_size_v <= 0)
    fail(
        fmt::format("kv head count and sizes must be > 0 (got heads {}, head_size {}, "
                    "head_size_v {})",
                    kv.num_kv_heads, kv.head_size, kv.head_size_v));
  if (kv.dtype == KvCacheDType::kAuto && model != DType::kFloat32)
    fail(
        fmt::format("kv.dtype auto (fp32 storage) is only valid for a float32 model (got model "
                    "dtype {}); resolve the cache dtype first",
                    to_string(model)));
  if (kv.scale_granularity == ScaleGranularity::kPerHead && kv.dtype != KvCacheDType::kFp8E4M3 &&
      kv.dtype != KvCacheDType::kFp8E5M2)
    fail(fmt::format("per-head scales need an fp8 cache (got {})", to_string(kv.dtype)));
  if (is_quantized(kv.dtype)) {
    if (kv.dtype == KvCacheDType::kNvfp4 && (!kv.k_block_scales || (kv.v && !kv.v_block_scales)))
      fail("nvfp4 cache needs k_block_scales and v_block_scales (got null)");
  } else if (kv.scale_granularity != ScaleGranularity::kNone || kv.k_scale || kv.v_scale) {
    fail(
        fmt::format("scales are only valid for quantized storage (got {} storage with scale "
                    "granularity {})",
                    to_string(kv.dtype), to_string(kv.scale_granularity)));
  }
}

}  // namespace

void validate_reference_args(const AttentionArgs& a) {
  const AttentionLayerParams& L = a.layer;
  const AttentionBatch& B = a.batch;
  if (L.num_heads <= 0 || L.num_kv_heads <= 0)
    fail(fmt::format("num_heads and num_kv_heads must be > 0 (got {} and {})", L.num_heads,
                     L.num_kv_heads));
  if (L.num_heads % L.num_kv_heads != 0)
    fail(fmt::format("num_heads must be a multiple of num_kv_heads (got {} and {})", L.num_heads,
                     L.num_kv_heads));
  if (L.head_size <= 0 || L.head_size_v <= 0)
    fail(fmt::format("head_size and head_size_v must be > 0 (got {} and {})", L.head_size,
                     L.head_size_v));
  if (a.kv.num_kv_heads != L.num_kv_heads || a.kv.head_size != L.head_size ||
      a.kv.head_size_v != L.head_size_v)
    fail(
        fmt::format("cache shape (kv heads {}, head_size {}, head_size_v {}) must match the layer "
                    "(kv heads {}, head_size {}, head_size_v {})",
                    a.kv.num_kv_heads, a.kv.head_size, a.kv.head_size_v, L.num_kv_heads,
                    L.head_size, L.head_size_v));
  if (!std::isfinite(L.scale)) fail(fmt::format("scale must be finite (got {})", L.scale));
  if (!std::isfinite(L.logits_soft_cap) || L.logits_soft_cap < 0.f)
    fail(fmt::format("logits_soft_cap must be finite and >= 0 (got {})", L.logits_soft_cap));
  if (L.window_left < -1 || L.window_right < -1)
    fail(fmt::format("window_left/window_right must be >= -1 (got {}, {})", L.window_left,
                     L.window_right));
  validate_cache_view(a.kv, L.dtype, true);

  if (B.num_seqs < 0 || B.total_q < 0)
    fail(fmt::format("num_seqs and total_q must be >= 0 (got {} and {})", B.num_seqs, B.total_q));
  if (B.total_q > 0 && (!a.q || !a.out)) fail("q and out must not be null when total_q > 0");
  if (B.num_seqs > 0 && (!B.cu_seqlens_q || !B.seqused_k || !B.block_table))
    fail("cu_seqlens_q, seqused_k and block_table must not be null when num_seqs > 0");
  if (B.num_seqs == 0) {
    if (B.total_q != 0)
      fail(fmt::format("total_q must be 0 without sequences (got {})", B.total_q));
    return;
  }
  if (B.cu_seqlens_q[0] != 0)
    fail(fmt::format("cu_seqlens_q[0] must be 0 (got {})", B.cu_seqlens_q[0]));
  if (B.cu_seqlens_q[B.num_seqs] != B.total_q)
    fail(fmt::format("cu_seqlens_q[num_seqs] must equal total_q (got {}, expected {})",
                     B.cu_seqlens_q[B.num_seqs], B.total_q));
  const int64_t row_capacity = int64_t(B.block_table_stride) * a.kv.block_size;
  for (int s = 0; s < B.num_seqs; ++s) {
    const int q_len = B.cu_seqlens_q[s + 1] - B.cu_seqlens_q[s];
    if (q_len < 0) fail(fmt::format("cu_seqlens_q must be non-decreasing (sequence {})", s));
    if (q_len > B.max_seqlen_q)
      fail(fmt::format("max_seqlen_q must be >= every q_len (sequence {} has {}, max_seqlen_q {})",
                       s, q_len, B.max_seqlen_q));
    const int k_len = B.seqused_k[s];
    if (k_len < 0) fail(fmt::format("seqused_k[{}] must be >= 0 (got {})", s, k_len));
    if (k_len > B.max_seqlen_k)
      fail(
          fmt::format("max_seqlen_k must be >= every seqused_k (sequence {} has {}, "
                      "max_seqlen_k {})",
                      s, k_len, B.max_seqlen_k));
    if (k_len > row_capacity)
      fail(
          fmt::format("seqused_k[{}] = {} exceeds the block-table row (block_table_stride {} x "
                      "block_size {})",
                      s, k_len, B.block_table_stride, a.kv.block_size));
    const int used_blocks = (k_len + a.kv.block_size - 1) / a.kv.block_size;
    for (int c = 0; c < used_blocks; ++c) {
      const int32_t b = B.block_table[int64_t(s) * B.block_table_stride + c];
      if (b < 0 || b >= a.kv.num_blocks)
        fail(fmt::format("block_table[{}][{}] = {} is outside [0, num_blocks = {})", s, c, b,
                         a.kv.num_blocks));
    }
  }
}

void validate_reference_write_args(const KvWriteArgs& w) {
  const KvCacheView& kv = w.cache;
  if (w.num_tokens < 0) fail(fmt::format("num_tokens must be >= 0 (got {})", w.num_tokens));
  validate_cache_view(kv, w.dtype, false);
  if (w.num_tokens == 0) return;
  if (!w.k || !w.slot_mapping) fail("write_kv: k and slot_mapping must not be null");
  if (kv.v && !w.v) fail("write_kv: v must not be null when the cache has a V tensor");
  const int64_t slots = int64_t(kv.num_blocks) * kv.block_size;
  for (int t = 0; t < w.num_tokens; ++t) {
    const int64_t slot = w.slot_mapping[t];
    if (slot < -1 || slot >= slots)
      fail(fmt::format("write_kv: slot_mapping[{}] = {} is outside [-1, {})", t, slot, slots));
  }
}

namespace {

class CpuReferenceBackend final : public AttentionBackend {
 public:
  std::string_view name() const override { return "CPU_REFERENCE"; }
  const Capabilities& capabilities() const override { return cpu_reference_capabilities(); }

  void plan(const AttentionBatch& host_batch, const AttentionLayerParams& layer) override {
    // Nothing to partition: run() walks rows in order. Check what can be checked on host data.
    if (layer.num_heads <= 0 || layer.num_kv_heads <= 0 || layer.num_heads % layer.num_kv_heads)
      fail(
          fmt::format("plan: num_heads must be a positive multiple of num_kv_heads (got {} and {})",
                      layer.num_heads, layer.num_kv_heads));
    if (host_batch.num_seqs < 0)
      fail(fmt::format("plan: num_seqs must be >= 0 (got {})", host_batch.num_seqs));
  }

  void run(const AttentionArgs& a, void* /*stream*/) override {
    validate_reference_args(a);
    const AttentionLayerParams& L = a.layer;
    const AttentionBatch& B = a.batch;
    const KvReader kr = k_reader(a.kv), vr = v_reader(a.kv);
    const int D = L.head_size, Dv = L.head_size_v, group = L.num_heads / L.num_kv_heads;
    const int bs = a.kv.block_size;
    const double cap = L.logits_soft_cap;
    std::vector<double> K, V, x, qrow(static_cast<size_t>(D)), acc(static_cast<size_t>(Dv), 0.0);
    for (int s = 0; s < B.num_seqs; ++s) {
      const int q0 = B.cu_seqlens_q[s], q_len = B.cu_seqlens_q[s + 1] - q0;
      const int k_len = B.seqused_k[s];
      if (q_len == 0) continue;
      const int32_t* row = B.block_table + int64_t(s) * B.block_table_stride;
      for (int g = 0; g < L.num_kv_heads; ++g) {
        // The logical (gathered, dequantized) keys and values of this sequence and KV head.
        K.assign(size_t(k_len) * D, 0.0);
        V.assign(size_t(k_len) * Dv, 0.0);
        for (int j = 0; j < k_len; ++j) {
          const int64_t blk = row[j / bs];
          for (int d = 0; d < D; ++d) K[size_t(j) * D + d] = kr.at(blk, g, j % bs, d);
          for (int d = 0; d < Dv; ++d) V[size_t(j) * Dv + d] = vr.at(blk, g, j % bs, d);
        }
        for (int h = g * group; h < (g + 1) * group; ++h) {
          for (int i = 0; i < q_len; ++i) {
            const int64_t t = q0 + i;
            const int64_t p = int64_t(k_len) - q_len + i;
            int64_t lo = 0, hi = int64_t(k_len) - 1;  // visible keys: [lo, hi]
            if (L.causal) hi = std::min(hi, p);
            if (L.window_left >= 0) lo = std::max(lo, p - L.window_left);
            if (L.window_right >= 0) hi = std::min(hi, p + L.window_right);
            for (int d = 0; d < D; ++d)
              qrow[d] = load_act(a.q, L.dtype, t * a.q_stride_token + h * a.q_stride_head + d);
            x.clear();
            double m = -std::numeric_limits<double>::infinity();
            for (int64_t j = lo; j <= hi; ++j) {
              double dot = 0.0;
              const double* krow = &K[size_t(j) * D];
              for (int d = 0; d < D; ++d) dot += qrow[d] * krow[d];
              double v = double(L.scale) * dot;
              if (cap > 0.0) v = cap * std::tanh(v / cap);
              if (L.alibi_slopes) v -= double(L.alibi_slopes[h]) * double(std::llabs(p - j));
              x.push_back(v);
              m = std::max(m, v);
            }
            const bool has_sink = L.sinks != nullptr;
            const double sink = has_sink ? double(L.sinks[h]) : 0.0;
            if (has_sink) m = std::max(m, sink);
            std::fill(acc.begin(), acc.end(), 0.0);
            double z = 0.0, lse = -std::numeric_limits<double>::infinity();
            if (std::isfinite(m)) {
              for (size_t n = 0; n < x.size(); ++n) {
                const double e = std::exp(x[n] - m);
                z += e;
                const double* vrow = &V[size_t(lo + int64_t(n)) * Dv];
                for (int d = 0; d < Dv; ++d) acc[d] += e * vrow[d];
              }
              if (has_sink) z += std::exp(sink - m);
              lse = m + std::log(z);
            }
            // Empty rows (z == 0, or only the sink): out = 0 by definition.
            const double inv = (z > 0.0 && !x.empty()) ? 1.0 / z : 0.0;
            for (int d = 0; d < Dv; ++d)
              store_act(a.out, L.dtype, t * a.out_stride_token + h * a.out_stride_head + d,
                        acc[d] * inv);
            if (a.lse) a.lse[t * L.num_heads + h] = float(lse);
          }
        }
      }
    }
  }

  void write_kv(const KvWriteArgs& w, void* /*stream*/) override {
    validate_reference_write_args(w);
    write_kv_cpu(w);  // the one CPU quantizer (src/kv), docs/semantics.md §2
  }
};

}  // namespace

std::unique_ptr<AttentionBackend> make_cpu_reference_backend() {
  return std::make_unique<CpuReferenceBackend>();
}

}  // namespace attnkit
