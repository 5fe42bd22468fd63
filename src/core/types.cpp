#include "attnkit/types.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "attnkit/error.hpp"
#include "core/strings.hpp"

namespace attnkit {

std::string_view to_string(DType d) {
  switch (d) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
  }
  return "?";
}

std::string_view to_string(KvCacheDType d) { return kv_format_info(d).name; }

std::string_view to_string(ScaleGranularity g) {
  switch (g) {
    case ScaleGranularity::kNone:
      return "none";
    case ScaleGranularity::kPerTensor:
      return "per-tensor";
    case ScaleGranularity::kPerHead:
      return "per-head";
    case ScaleGranularity::kPerBlock16:
      return "per-16-elements";
  }
  return "?";
}

std::string_view to_string(AttentionType t) {
  switch (t) {
    case AttentionType::kDecoder:
      return "decoder";
    case AttentionType::kEncoder:
      return "encoder";
    case AttentionType::kEncoderOnly:
      return "encoder_only";
    case AttentionType::kCross:
      return "encoder_decoder";
  }
  return "?";
}

std::string_view to_string(Platform p) {
  switch (p) {
    case Platform::kCuda:
      return "cuda";
    case Platform::kRocm:
      return "rocm";
    case Platform::kCpu:
      return "cpu";
    case Platform::kXpu:
      return "xpu";
  }
  return "?";
}

std::string_view to_string(Runner r) {
  switch (r) {
    case Runner::kAuto:
      return "auto";
    case Runner::kGenerate:
      return "generate";
    case Runner::kPooling:
      return "pooling";
  }
  return "?";
}

std::string_view to_string(StateKind k) {
  switch (k) {
    case StateKind::kMamba:
      return "mamba";
    case StateKind::kLinearAttention:
      return "linear_attention";
    case StateKind::kShortConv:
      return "short_conv";
  }
  return "?";
}

DType parse_dtype(std::string_view s) {
  const std::string l = to_lower(s);
  if (l == "float32" || l == "fp32" || l == "float") return DType::kFloat32;
  if (l == "float16" || l == "fp16" || l == "half") return DType::kFloat16;
  if (l == "bfloat16" || l == "bf16") return DType::kBFloat16;
  throw InvalidArgument(fmt::format(
      "dtype '{}' is not a model dtype; expected one of float32, float16, bfloat16", s));
}

Runner parse_runner(std::string_view s) {
  const std::string l = to_lower(s);
  if (l == "auto") return Runner::kAuto;
  if (l == "generate") return Runner::kGenerate;
  if (l == "pooling") return Runner::kPooling;
  throw InvalidArgument(
      fmt::format("runner '{}' is not a runner; expected one of auto, generate, pooling", s));
}

KvCacheDType parse_kv_cache_dtype(std::string_view s) {
  const std::string l = to_lower(s);
  if (l == "auto") return KvCacheDType::kAuto;
  if (l == "float16" || l == "fp16" || l == "half") return KvCacheDType::kFloat16;
  if (l == "bfloat16" || l == "bf16") return KvCacheDType::kBFloat16;
  if (l == "fp8" || l == "fp8_e4m3" || l == "e4m3") return KvCacheDType::kFp8E4M3;
  if (l == "fp8_e5m2" || l == "e5m2") return KvCacheDType::kFp8E5M2;
  if (l == "nvfp4" || l == "fp4") return KvCacheDType::kNvfp4;
  throw InvalidArgument(fmt::format(
      "kv_cache_dtype '{}' is not a KV storage format; expected one of auto, float16, bfloat16, "
      "fp8 (= fp8_e4m3), fp8_e5m2, nvfp4",
      s));
}

AttentionType parse_attention_type(std::string_view s) {
  const std::string l = to_lower(s);
  if (l == "decoder") return AttentionType::kDecoder;
  if (l == "encoder") return AttentionType::kEncoder;
  if (l == "encoder_only") return AttentionType::kEncoderOnly;
  if (l == "encoder_decoder" || l == "cross") return AttentionType::kCross;
  throw InvalidArgument(
      fmt::format("attention type '{}' is unknown; expected decoder, encoder, encoder_only or "
                  "encoder_decoder (cross)",
                  s));
}

int dtype_bytes(DType d) { return d == DType::kFloat32 ? 4 : 2; }

const KvFormatInfo& kv_format_info(KvCacheDType d) {
  static const std::array<KvFormatInfo, 6> kInfo = {{
      {"auto", 0, false, ScaleGranularity::kNone, KvKernelView::kBFloat16},
      {"float16", 16, false, ScaleGranularity::kNone, KvKernelView::kFloat16},
      {"bfloat16", 16, false, ScaleGranularity::kNone, KvKernelView::kBFloat16},
      {"fp8_e4m3", 8, true, ScaleGranularity::kPerTensor, KvKernelView::kFp8E4M3},
      {"fp8_e5m2", 8, true, ScaleGranularity::kPerTensor, KvKernelView::kFp8E5M2},
      {"nvfp4", 4, true, ScaleGranularity::kPerBlock16, KvKernelView::kE2M1Packed},
  }};
  return kInfo[static_cast<size_t>(d)];
}

KvCacheDType resolve_kv_dtype(KvCacheDType kv, DType model) {
  if (kv != KvCacheDType::kAuto) return kv;
  switch (model) {
    case DType::kFloat16:
      return KvCacheDType::kFloat16;
    case DType::kBFloat16:
      return KvCacheDType::kBFloat16;
    case DType::kFloat32:
      return KvCacheDType::kAuto;  // fp32 storage: only reachable via auto
  }
  return KvCacheDType::kAuto;
}

int64_t kv_bytes_per_head_vector(KvCacheDType resolved, DType model, int head_size) {
  if (resolved == KvCacheDType::kAuto) return int64_t(head_size) * dtype_bytes(model);
  const int bits = kv_format_info(resolved).bits_per_element;
  return (int64_t(head_size) * bits + 7) / 8;
}

int64_t kv_block_scale_bytes_per_head_vector(KvCacheDType resolved, int head_size) {
  return resolved == KvCacheDType::kNvfp4 ? (head_size + 15) / 16 : 0;
}

double LayerSpec::default_scale() const {
  return 1.0 / std::sqrt(double(is_mla() ? mla->prefill_qk_head_size() : head_size));
}

std::string LayerSpec::signature() const {
  std::string s = fmt::format("{}|h{}/{}|d{}/{}|{}|kv:{}:{}", to_string(attn_type), num_heads,
                              num_kv_heads, head_size, head_size_v, to_string(dtype),
                              to_string(kv_cache_dtype), to_string(kv_scale_granularity));
  if (sliding_window) s += fmt::format("|win{}", *sliding_window);
  if (attention_chunk_size) s += fmt::format("|chunk{}", *attention_chunk_size);
  if (alibi) s += "|alibi";
  if (sinks) s += "|sinks";
  if (logits_soft_cap != 0.0) s += fmt::format("|cap{}", logits_soft_cap);
  if (softmax_scale) s += fmt::format("|scale{}", *softmax_scale);
  if (mla) {
    s += fmt::format("|mla{}/{}/{}/{}/{}", mla->kv_lora_rank, mla->qk_nope_head_dim,
                     mla->qk_rope_head_dim, mla->v_head_dim, mla->q_lora_rank);
    if (mla->sparse) s += ":sparse";
  }
  if (block_size) s += fmt::format("|bs{}", *block_size);
  if (mm_prefix) s += "|mm_prefix";
  if (kv_sharing_target_layer) s += "|kv_shared";  // some backends cannot read a shared cache
  return s;
}

}  // namespace attnkit
