#include "backends/cuda_mla/capabilities.hpp"

namespace attnkit {

const Capabilities& cuda_mla_capabilities() {
  static const Capabilities caps = [] {
    Capabilities c;
    c.name = "CUDA_MLA";
    c.platforms = {Platform::kCuda};
    c.min_compute_capability = 80;
    c.dtypes = {DType::kFloat16, DType::kBFloat16};
    c.kv_cache_dtypes = {KvCacheDType::kAuto, KvCacheDType::kFloat16, KvCacheDType::kBFloat16,
                         KvCacheDType::kFp8E4M3};
    c.head_sizes = {.sizes = {576}};
    c.kernel_block_sizes = {BlockSizeEntry::multiple_of(16)};
    c.preferred_block_size = 64;
    c.mla = MlaSupport::kMlaOnly;
    c.attn_types = {AttentionType::kDecoder};
    return c;
  }();
  return caps;
}

}  // namespace attnkit
