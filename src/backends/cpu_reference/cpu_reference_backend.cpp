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
#include "backends/common/validate.hpp"
#include "backends/cpu_reference/capabilities.hpp"

namespace attnkit {
namespace {

[[noreturn]] void fail(const std::string& what) { throw InvalidArgument("CPU_REFERENCE: " + what); }

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
          kv.v_sb_block,
          kv.v_sb_head,
          kv.v_sb_token};
}

class CpuReferenceBackend final : public AttentionBackend {
 public:
  std::string_view name() const override { return "CPU_REFERENCE"; }
  const Capabilities& capabilities() const override { return cpu_reference_capabilities(); }

  void plan(const AttentionBatch& host_batch, const AttentionLayerParams& layer) override {
    // Nothing to partition: run() walks rows in order. Check what can be checked on host data.
    backend_checks::check_layer("CPU_REFERENCE plan", layer);
    if (host_batch.num_seqs < 0)
      fail(fmt::format("plan: num_seqs must be >= 0 (got {})", host_batch.num_seqs));
  }

  void run(const AttentionArgs& a, void* /*stream*/) override {
    backend_checks::check_attention_args("CPU_REFERENCE", a);
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
            if (B.mm_prefix_ranges)  // a query inside a PrefixLM range also sees all of it
              for (int r = B.mm_prefix_offsets[s]; r < B.mm_prefix_offsets[s + 1]; ++r) {
                const int64_t rs = B.mm_prefix_ranges[2 * r], re = B.mm_prefix_ranges[2 * r + 1];
                if (p >= rs && p < re) lo = std::min(lo, rs), hi = std::max(hi, re - 1);
              }
            if (L.attention_chunk_size > 0) {  // the query's own chunk only, applied last
              const int64_t c0 = chunk_first_key(p, L.attention_chunk_size);
              lo = std::max(lo, c0), hi = std::min(hi, c0 + L.attention_chunk_size - 1);
            }
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
    backend_checks::check_write_args("CPU_REFERENCE", w);
    write_kv_cpu(w);  // the one CPU quantizer (src/kv), docs/semantics.md §2
  }
};

}  // namespace

std::unique_ptr<AttentionBackend> make_cpu_reference_backend() {
  return std::make_unique<CpuReferenceBackend>();
}

}  // namespace attnkit
