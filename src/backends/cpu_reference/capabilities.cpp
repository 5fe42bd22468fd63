#include "backends/cpu_reference/capabilities.hpp"

namespace attnkit {

const Capabilities& cpu_reference_capabilities() {
  static const Capabilities caps = [] {
    Capabilities c;
    c.name = "CPU_REFERENCE";
    c.platforms = {Platform::kCpu};
    c.dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
    c.kv_cache_dtypes = {};  // every storage format
    c.head_sizes = {};       // any
    c.any_head_size_v = true;
    c.kernel_block_sizes = {BlockSizeEntry::multiple_of(1)};
    c.mla = MlaSupport::kBoth;
    c.sinks = c.alibi = c.logits_soft_cap = c.sliding_window = c.non_causal = c.mm_prefix = true;
    c.chunked_local = true;
    c.per_head_quant_scales = true;
    c.attn_types = {AttentionType::kDecoder, AttentionType::kEncoder, AttentionType::kEncoderOnly,
                    AttentionType::kCross};
    c.metadata_forms = unsigned(MetadataForm::kSeqUsedK) | unsigned(MetadataForm::kBlockTable) |
                       unsigned(MetadataForm::kCuSeqlensK);
    return c;
  }();
  return caps;
}

}  // namespace attnkit
