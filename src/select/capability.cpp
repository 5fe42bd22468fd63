#include "attnkit/capability.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/strings.hpp"

namespace attnkit {

std::string to_string(const BlockSizeEntry& e) {
  return e.multiple ? fmt::format("MultipleOf({})", e.value) : std::to_string(e.value);
}

std::string to_string(const std::vector<BlockSizeEntry>& v) {
  std::vector<std::string> parts;
  for (const auto& e : v) parts.push_back(to_string(e));
  return "[" + join(parts) + "]";
}

bool block_size_supported(const std::vector<BlockSizeEntry>& entries, int block_size) {
  return std::any_of(entries.begin(), entries.end(), [&](const BlockSizeEntry& e) {
    return e.value > 0 && block_size > 0 && block_size % e.value == 0;
  });
}

bool HeadSizeRule::accepts(int h) const {
  if (!sizes.empty()) return std::find(sizes.begin(), sizes.end(), h) != sizes.end();
  if (h <= 0) return false;
  if (min && h < min) return false;
  if (max && h > max) return false;
  return multiple_of <= 1 || h % multiple_of == 0;
}

std::string HeadSizeRule::describe() const {
  if (!sizes.empty()) {
    std::vector<std::string> parts;
    for (int s : sizes) parts.push_back(std::to_string(s));
    return "[" + join(parts) + "]";
  }
  if (!min && !max && multiple_of <= 1) return "any";
  // The smallest accepted size first: "8..512 step 8", "32+ step 16", "64..256".
  const int step = multiple_of > 1 ? multiple_of : 1;
  const int lowest = min ? (min + step - 1) / step * step : step;
  std::string s = max ? fmt::format("{}..{}", lowest, max) : fmt::format("{}+", lowest);
  if (step > 1) s += fmt::format(" step {}", step);
  return s;
}

std::vector<MetadataForm> required_metadata_forms(const LayerSpec& spec) {
  // Encoder self-attention (encoder-only models and the encoder of an encoder-decoder model)
  // keeps no persistent cache: it runs over contiguous K/V described by cu_seqlens_k.
  if (spec.attn_type == AttentionType::kEncoderOnly || spec.attn_type == AttentionType::kEncoder)
    return {MetadataForm::kCuSeqlensK};
  return {MetadataForm::kSeqUsedK, MetadataForm::kBlockTable};
}

std::string_view to_string(MetadataForm f) {
  switch (f) {
    case MetadataForm::kSeqUsedK:
      return "seqused_k";
    case MetadataForm::kBlockTable:
      return "block_table";
    case MetadataForm::kCuSeqlensK:
      return "cu_seqlens_k";
  }
  return "?";
}

int Capabilities::preferred_block(int default_block_size) const {
  if (preferred_block_size) return *preferred_block_size;
  if (block_size_supported(kernel_block_sizes, default_block_size)) return default_block_size;
  int smallest = 0;
  for (const auto& e : kernel_block_sizes)
    if (!smallest || e.value < smallest) smallest = e.value;
  return smallest ? smallest : default_block_size;
}

namespace {
template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
}  // namespace

std::vector<std::string> device_reasons(const Capabilities& c, const DeviceInfo& d) {
  std::vector<std::string> r;
  const bool platform_ok = c.platforms.empty() || contains(c.platforms, d.platform);
  if (!platform_ok) r.push_back(fmt::format("platform {} not supported", to_string(d.platform)));
  // A compute-capability range only means something on a platform the backend runs on (a CUDA
  // range says nothing about a ROCm gfx942 "9.4").
  if (platform_ok && (d.platform == Platform::kCuda || d.platform == Platform::kRocm)) {
    const int cc = d.cc.as_int();
    if ((c.min_compute_capability && cc < *c.min_compute_capability) ||
        (c.max_compute_capability && cc > *c.max_compute_capability))
      r.push_back("compute capability not supported");
  }
  return r;
}

std::vector<std::string> invalid_reasons(const Capabilities& c, const LayerSpec& s,
                                         const DeviceInfo& d) {
  std::vector<std::string> r;
  if (!c.head_sizes.accepts(s.head_size)) r.push_back("head_size not supported");
  // head_size_v == 0 means "not set": the same as head_size.
  const int head_size_v = s.head_size_v ? s.head_size_v : s.head_size;
  if (head_size_v != s.head_size && !c.any_head_size_v && !s.is_mla() &&
      !contains(c.asymmetric_head_sizes, std::pair<int, int>{s.head_size, head_size_v}))
    r.push_back("head_size_v not supported");
  if (!contains(c.dtypes, s.dtype)) r.push_back("dtype not supported");
  // `auto` is accepted when listed, or when the storage it resolves to (the model dtype) is.
  if (!c.kv_cache_dtypes.empty() && !contains(c.kv_cache_dtypes, s.kv_cache_dtype) &&
      !(s.kv_cache_dtype == KvCacheDType::kAuto &&
        contains(c.kv_cache_dtypes, s.resolved_kv_dtype())))
    r.push_back("kv_cache_dtype not supported");
  if (s.block_size && !block_size_supported(c.kernel_block_sizes, *s.block_size))
    r.push_back("block_size not supported");
  if (s.mm_prefix && !c.mm_prefix)
    r.push_back("partial multimodal token full attention not supported");
  if (s.is_mla() && c.mla == MlaSupport::kStandardOnly) r.push_back("MLA not supported");
  if (!s.is_mla() && c.mla == MlaSupport::kMlaOnly) r.push_back("non-MLA not supported");
  if (s.sinks && !c.sinks) r.push_back("attention sinks not supported");
  if (s.is_sparse() && !c.sparse) r.push_back("sparse not supported");
  if (!s.is_sparse() && c.sparse) r.push_back("non-sparse not supported");
  if (s.kv_scale_granularity == ScaleGranularity::kPerHead && !c.per_head_quant_scales)
    r.push_back("per-head quant scales not supported");
  for (std::string& why : device_reasons(c, d)) r.push_back(std::move(why));
  if (!contains(c.attn_types, s.attn_type))
    r.push_back(fmt::format("attention type {} not supported", to_string(s.attn_type)));
  if (s.sliding_window && !c.sliding_window) r.push_back("sliding window not supported");
  if (s.attention_chunk_size && !c.chunked_local)
    r.push_back("chunked local attention not supported");
  if (!s.causal() && !c.non_causal) r.push_back("non-causal attention not supported");
  if (s.alibi && !c.alibi) r.push_back("ALiBi not supported");
  if (s.logits_soft_cap != 0.0 && !c.logits_soft_cap) r.push_back("logits softcap not supported");
  for (MetadataForm f : required_metadata_forms(s))
    if (!c.supports_metadata(f))
      r.push_back(fmt::format("{} metadata not supported", to_string(f)));
  if (c.combination)
    for (auto& reason : c.combination(s, d)) r.push_back(std::move(reason));
  return r;
}

std::string compute_capability_text(int cc) { return fmt::format("{}.{}", cc / 10, cc % 10); }

std::string compute_capability_range(const Capabilities& c) {
  const auto& lo = c.min_compute_capability;
  const auto& hi = c.max_compute_capability;
  if (lo && hi)
    return *lo == *hi ? compute_capability_text(*lo)
                      : compute_capability_text(*lo) + "-" + compute_capability_text(*hi);
  if (lo) return compute_capability_text(*lo) + "+";
  if (hi) return "up to " + compute_capability_text(*hi);
  return "any";
}

std::vector<std::string> detailed_reasons(const Capabilities& c,
                                          const std::vector<std::string>& reasons) {
  std::vector<std::string> out;
  for (const auto& r : reasons) {
    if (r == "block_size not supported")
      out.push_back(fmt::format("{} (kernel block sizes {})", r, to_string(c.kernel_block_sizes)));
    else if (r == "head_size not supported")
      out.push_back(fmt::format("{} (head sizes {})", r, c.head_sizes.describe()));
    else if (r == "compute capability not supported" &&
             (c.min_compute_capability || c.max_compute_capability))
      out.push_back(fmt::format("{} (needs {})", r, compute_capability_range(c)));
    else
      out.push_back(r);
  }
  return out;
}

}  // namespace attnkit
