// CPU KV write (through the slot mapping, converting to the cache dtype) and the matching read.
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/numeric.hpp"

namespace attnkit {

namespace {

constexpr int kNvfp4Group = 16;

float load(const void* base, DType t, int64_t i) {
  switch (t) {
    case DType::kFloat32:
      return static_cast<const float*>(base)[i];
    case DType::kFloat16:
      return fp16_bits_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::kBFloat16:
      return bf16_bits_to_float(static_cast<const uint16_t*>(base)[i]);
  }
  return 0.f;
}

float scale_of(const float* scales, ScaleGranularity g, int head) {
  if (!scales) return 1.f;
  return g == ScaleGranularity::kPerHead ? scales[head] : scales[0];
}

// Stores one head vector `x` of `n` floats at `dst` (and nvfp4 block scales at `bs`).
void store_vector(const float* x, int n, KvCacheDType dt, float scale, uint8_t* dst, uint8_t* bs) {
  switch (dt) {
    case KvCacheDType::kAuto:
      std::memcpy(dst, x, size_t(n) * 4);
      return;  // fp32 storage
    case KvCacheDType::kFloat16:
      for (int e = 0; e < n; ++e) {
        const uint16_t h = float_to_fp16_bits(x[e]);
        std::memcpy(dst + 2 * e, &h, 2);
      }
      return;
    case KvCacheDType::kBFloat16:
      for (int e = 0; e < n; ++e) {
        const uint16_t h = float_to_bf16_bits(x[e]);
        std::memcpy(dst + 2 * e, &h, 2);
      }
      return;
    case KvCacheDType::kFp8E4M3:
      for (int e = 0; e < n; ++e) dst[e] = float_to_fp8_e4m3(x[e] / scale);
      return;
    case KvCacheDType::kFp8E5M2:
      for (int e = 0; e < n; ++e) dst[e] = float_to_fp8_e5m2(x[e] / scale);
      return;
    case KvCacheDType::kNvfp4: {
      std::memset(dst, 0, size_t(n + 1) / 2);
      for (int g0 = 0, gi = 0; g0 < n; g0 += kNvfp4Group, ++gi) {
        const int g1 = std::min(n, g0 + kNvfp4Group);
        float amax = 0.f;
        for (int e = g0; e < g1; ++e)
          if (std::isfinite(x[e])) amax = std::max(amax, std::fabs(x[e]));
        const uint8_t code = float_to_fp8_e4m3(amax / kE2M1Max / scale);
        const float block_scale = fp8_e4m3_to_float(code);
        // Zero (or underflowed) block: store zeros instead of dividing by zero.
        const bool zero = !(block_scale > 0.f) || !std::isfinite(block_scale);
        bs[gi] = zero ? 0 : code;
        for (int e = g0; e < g1; ++e) {
          const uint8_t nib = zero ? 0 : float_to_e2m1(x[e] / (block_scale * scale));
          dst[e / 2] |= uint8_t((e % 2) ? nib << 4 : nib);
        }
      }
      return;
    }
  }
}

void load_vector(const uint8_t* src, const uint8_t* bs, int n, KvCacheDType dt, float scale,
                 float* out) {
  for (int e = 0; e < n; ++e) {
    uint16_t h;
    switch (dt) {
      case KvCacheDType::kAuto:
        std::memcpy(&out[e], src + 4 * e, 4);
        break;
      case KvCacheDType::kFloat16:
        std::memcpy(&h, src + 2 * e, 2);
        out[e] = fp16_bits_to_float(h);
        break;
      case KvCacheDType::kBFloat16:
        std::memcpy(&h, src + 2 * e, 2);
        out[e] = bf16_bits_to_float(h);
        break;
      case KvCacheDType::kFp8E4M3:
        out[e] = fp8_e4m3_to_float(src[e]) * scale;
        break;
      case KvCacheDType::kFp8E5M2:
        out[e] = fp8_e5m2_to_float(src[e]) * scale;
        break;
      case KvCacheDType::kNvfp4: {
        const uint8_t nib = (e % 2) ? uint8_t(src[e / 2] >> 4) : uint8_t(src[e / 2] & 0xf);
        out[e] = e2m1_to_float(nib) * fp8_e4m3_to_float(bs[e / kNvfp4Group]) * scale;
        break;
      }
    }
  }
}

void check_view(const KvCacheView& c, const char* who) {
  if (!c.k || c.num_blocks <= 0 || c.block_size <= 0 || c.num_kv_heads <= 0 || c.head_size <= 0)
    throw InvalidArgument(fmt::format(
        "{}: cache view needs k, num_blocks, block_size, num_kv_heads and head_size > 0 (got "
        "k={}, {}, {}, {}, {})",
        who, c.k ? "set" : "null", c.num_blocks, c.block_size, c.num_kv_heads, c.head_size));
  if (c.dtype == KvCacheDType::kNvfp4 && (!c.k_block_scales || (c.v && !c.v_block_scales)))
    throw InvalidArgument(
        fmt::format("{}: an nvfp4 cache view needs its block-scale pointers", who));
  if (c.scale_granularity == ScaleGranularity::kPerHead && c.dtype != KvCacheDType::kFp8E4M3 &&
      c.dtype != KvCacheDType::kFp8E5M2)
    throw InvalidArgument(
        fmt::format("{}: per-head scales need an fp8 cache, got {}", who, to_string(c.dtype)));
}

}  // namespace

void write_kv_cpu(const KvWriteArgs& a) {
  const KvCacheView& c = a.cache;
  check_view(c, "write_kv_cpu");
  if (a.num_tokens < 0)
    throw InvalidArgument(
        fmt::format("write_kv_cpu: num_tokens must be >= 0, got {}", a.num_tokens));
  if (a.num_tokens == 0) return;
  if (!a.k || !a.slot_mapping)
    throw InvalidArgument("write_kv_cpu: k and slot_mapping must be set when num_tokens > 0");
  if (bool(a.v) != bool(c.v))
    throw InvalidArgument(
        fmt::format("write_kv_cpu: v is {} but the cache's v is {} (MLA latent caches take k only)",
                    a.v ? "set" : "null", c.v ? "set" : "null"));
  if (c.v && c.head_size_v <= 0)
    throw InvalidArgument(
        fmt::format("write_kv_cpu: head_size_v must be > 0, got {}", c.head_size_v));
  const int64_t capacity = int64_t(c.num_blocks) * c.block_size;
  for (int t = 0; t < a.num_tokens; ++t) {
    const int64_t s = a.slot_mapping[t];
    if (s < -1 || s >= capacity)
      throw InvalidArgument(fmt::format(
          "write_kv_cpu: slot_mapping[{}] = {} must be -1 (skip) or in [0, {}) (num_blocks {} x "
          "block_size {})",
          t, s, capacity, c.num_blocks, c.block_size));
  }

  std::vector<float> row(size_t(std::max(c.head_size, c.head_size_v)));
  for (int t = 0; t < a.num_tokens; ++t) {
    const int64_t s = a.slot_mapping[t];
    if (s < 0) continue;
    const int64_t blk = s / c.block_size, off = s % c.block_size;
    for (int h = 0; h < c.num_kv_heads; ++h) {
      for (int pass = 0; pass < (c.v ? 2 : 1); ++pass) {
        const bool is_v = pass == 1;
        const int n = is_v ? c.head_size_v : c.head_size;
        const void* src = is_v ? a.v : a.k;
        const int64_t base = t * (is_v ? a.v_stride_token : a.k_stride_token) +
                             h * (is_v ? a.v_stride_head : a.k_stride_head);
        for (int e = 0; e < n; ++e) row[size_t(e)] = load(src, a.dtype, base + e);
        auto* dst = static_cast<uint8_t*>(is_v ? c.v : c.k) +
                    blk * (is_v ? c.v_stride_block : c.stride_block) +
                    h * (is_v ? c.v_stride_head : c.stride_head) +
                    off * (is_v ? c.v_stride_token : c.stride_token);
        uint8_t* bs = nullptr;
        if (c.dtype == KvCacheDType::kNvfp4)
          bs = is_v ? c.v_block_scales + blk * c.v_sb_block + h * c.v_sb_head + off * c.v_sb_token
                    : c.k_block_scales + blk * c.sb_block + h * c.sb_head + off * c.sb_token;
        store_vector(row.data(), n, c.dtype,
                     scale_of(is_v ? c.v_scale : c.k_scale, c.scale_granularity, h), dst, bs);
      }
    }
  }
}

void read_kv_cpu(const KvCacheView& c, int64_t slot, int head, bool value, float* out) {
  check_view(c, "read_kv_cpu");
  if (slot < 0 || slot >= int64_t(c.num_blocks) * c.block_size || head < 0 ||
      head >= c.num_kv_heads || !out)
    throw InvalidArgument(
        fmt::format("read_kv_cpu: slot must be in [0, {}) and head in [0, {}), got {} and {}",
                    int64_t(c.num_blocks) * c.block_size, c.num_kv_heads, slot, head));
  const int64_t blk = slot / c.block_size, off = slot % c.block_size;
  const bool from_v = value && c.v;  // MLA: V is the head of the K row
  const int n = value ? c.head_size_v : c.head_size;
  const auto* src = static_cast<const uint8_t*>(from_v ? c.v : c.k) +
                    blk * (from_v ? c.v_stride_block : c.stride_block) +
                    head * (from_v ? c.v_stride_head : c.stride_head) +
                    off * (from_v ? c.v_stride_token : c.stride_token);
  const uint8_t* bs = nullptr;
  if (c.dtype == KvCacheDType::kNvfp4)
    bs = from_v ? c.v_block_scales + blk * c.v_sb_block + head * c.v_sb_head + off * c.v_sb_token
                : c.k_block_scales + blk * c.sb_block + head * c.sb_head + off * c.sb_token;
  const float* scales = from_v ? c.v_scale : c.k_scale;
  load_vector(src, bs, n, c.dtype, scale_of(scales, c.scale_granularity, head), out);
}

}  // namespace attnkit
