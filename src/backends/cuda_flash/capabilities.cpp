#include "backends/cuda_flash/capabilities.hpp"

namespace attnkit {
namespace {

Capabilities v2_caps() {
  Capabilities c;
  c.name = "CUDA_FLASH";
  c.platforms = {Platform::kCuda};
  c.min_compute_capability = 80;
  c.dtypes = {DType::kFloat16, DType::kBFloat16};
  c.kv_cache_dtypes = {KvCacheDType::kAuto, KvCacheDType::kFloat16, KvCacheDType::kBFloat16,
                       KvCacheDType::kFp8E4M3, KvCacheDType::kFp8E5M2};
  c.head_sizes = {.sizes = {64, 80, 96, 128, 192, 256, 512}};
  c.asymmetric_head_sizes = {{192, 128}};
  c.kernel_block_sizes = {BlockSizeEntry::multiple_of(16)};
  c.preferred_block_size = 16;
  c.sinks = c.alibi = c.logits_soft_cap = c.sliding_window = c.non_causal = true;
  c.per_head_quant_scales = true;
  c.attn_types = {AttentionType::kDecoder, AttentionType::kEncoder, AttentionType::kEncoderOnly,
                  AttentionType::kCross};
  c.metadata_forms = unsigned(MetadataForm::kSeqUsedK) | unsigned(MetadataForm::kBlockTable) |
                     unsigned(MetadataForm::kCuSeqlensK);
  return c;
}

}  // namespace

const std::vector<KernelGeneration>& cuda_flash_generations() {
  static const std::vector<KernelGeneration> gens = [] {
    Capabilities v3 = v2_caps();
    v3.min_compute_capability = 90;
    v3.max_compute_capability = 90;
    v3.head_sizes = {.sizes = {64, 128, 256}};
    v3.asymmetric_head_sizes = {};
    Capabilities v4 = v2_caps();
    v4.min_compute_capability = 100;
    v4.max_compute_capability = 103;
    return std::vector<KernelGeneration>{
        {"v2", true, v2_caps()}, {"v3", false, v3}, {"v4", false, v4}};
  }();
  return gens;
}

const Capabilities& cuda_flash_capabilities() {
  static const Capabilities caps = v2_caps();
  return caps;
}

}  // namespace attnkit
