#include "backends/cuda_mla/capabilities.hpp"

#include <fmt/format.h>

#include <set>

#include "backends/cuda_mla/manifest.hpp"

namespace attnkit {

// Read off the manifest (head pair, dtypes, KV kinds); the rest is what the wide form does with
// a latent cache and what MLA layers need.
const Capabilities& cuda_mla_capabilities() {
  static const Capabilities caps = [] {
    using cuda_mla::kMlaManifest;
    using cuda_mla::KvKind;
    Capabilities c;
    c.name = "CUDA_MLA";
    c.platforms = {Platform::kCuda};
    c.min_compute_capability = 80;
    std::set<int> heads;
    std::set<DType> dtypes;
    bool has16 = false, has8 = false;
    for (const auto& f : kMlaManifest) {
      heads.insert(f.head_qk);
      dtypes.insert(f.dtype);
      (f.kv == KvKind::kFp8 ? has8 : has16) = true;
    }
    c.head_sizes = {.sizes = std::vector<int>(heads.begin(), heads.end())};
    c.dtypes.assign(dtypes.begin(), dtypes.end());
    c.kv_cache_dtypes.clear();
    if (has16) {
      c.kv_cache_dtypes.push_back(KvCacheDType::kAuto);
      if (dtypes.count(DType::kFloat16)) c.kv_cache_dtypes.push_back(KvCacheDType::kFloat16);
      if (dtypes.count(DType::kBFloat16)) c.kv_cache_dtypes.push_back(KvCacheDType::kBFloat16);
    }
    if (has8) {  // one fp8 instance reads both formats (a run-time flag of the dequantization)
      c.kv_cache_dtypes.push_back(KvCacheDType::kFp8E4M3);
      c.kv_cache_dtypes.push_back(KvCacheDType::kFp8E5M2);
    }
    // The kernel gathers each token's row through the block table: any multiple of 16 works (the
    // latent cache's pages are planned in 16s); 64 is what vLLM's MLA kernels take.
    c.kernel_block_sizes = {BlockSizeEntry::multiple_of(16)};
    c.preferred_block_size = 64;
    c.mla = MlaSupport::kMlaOnly;
    c.attn_types = {AttentionType::kDecoder};
    c.combination = [](const LayerSpec& spec, const DeviceInfo&) {
      std::vector<std::string> reasons;
      KvKind kind{};
      if (!cuda_flash::kv_kind_for(spec.resolved_kv_dtype(), spec.dtype, &kind))
        reasons.push_back(fmt::format("kv_cache_dtype {} with dtype {} not built",
                                      to_string(spec.resolved_kv_dtype()), to_string(spec.dtype)));
      else if (cuda_mla::find_mla_instance(spec.head_size, spec.head_size_v, spec.dtype, kind) < 0)
        reasons.push_back(fmt::format("head_size {}/{} with dtype {} and {} KV not built",
                                      spec.head_size, spec.head_size_v, to_string(spec.dtype),
                                      kind == KvKind::kFp8 ? "fp8" : "16-bit"));
      return reasons;
    };
    return c;
  }();
  return caps;
}

}  // namespace attnkit
