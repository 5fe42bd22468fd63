#include "backends/cpu_flash/capabilities.hpp"

#include <string>
#include <vector>

namespace attnkit {

// Exactly what cpu_flash_backend.cpp and kernel_impl.hpp run: head sizes (Q/K and V) are
// multiples of 16 up to 576 (a SIMD row and an nvfp4 scale group), any block size through the
// block table, every storage format, every mask/logit feature, MLA decode over the latent cache.
const Capabilities& cpu_flash_capabilities() {
  static const Capabilities caps = [] {
    Capabilities c;
    c.name = "CPU_FLASH";
    c.platforms = {Platform::kCpu};
    c.dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
    c.kv_cache_dtypes = {};  // every storage format
    c.head_sizes.min = 16;
    c.head_sizes.max = 576;
    c.head_sizes.multiple_of = 16;
    c.any_head_size_v = true;  // within the same rule, checked below
    c.kernel_block_sizes = {BlockSizeEntry::multiple_of(1)};
    c.preferred_block_size = 16;
    c.mla = MlaSupport::kBoth;
    c.sinks = c.alibi = c.logits_soft_cap = c.sliding_window = c.non_causal = c.mm_prefix = true;
    c.chunked_local = true;
    c.per_head_quant_scales = true;
    c.attn_types = {AttentionType::kDecoder, AttentionType::kEncoder, AttentionType::kEncoderOnly,
                    AttentionType::kCross};
    c.metadata_forms = unsigned(MetadataForm::kSeqUsedK) | unsigned(MetadataForm::kBlockTable) |
                       unsigned(MetadataForm::kCuSeqlensK);
    const HeadSizeRule rule = c.head_sizes;
    c.combination = [rule](const LayerSpec& s, const DeviceInfo&) {
      std::vector<std::string> r;
      const int hv = s.head_size_v ? s.head_size_v : s.head_size;  // 0 = same as head_size
      if (!rule.accepts(hv)) r.push_back("head_size_v not supported");
      return r;
    };
    return c;
  }();
  return caps;
}

}  // namespace attnkit
