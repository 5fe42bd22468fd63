#include "backends/cuda_flash/capabilities.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "backends/cuda_flash/manifest.hpp"
#include "backends/cuda_flash/tiles.hpp"

namespace attnkit {

namespace cuda_flash {

void declare_manifest(Capabilities& c, std::span<const FlashInstance> manifest) {
  std::set<int> heads;
  std::set<std::pair<int, int>> asym;
  std::set<DType> dtypes;
  bool has16 = false, has8 = false;
  for (const FlashInstance& f : manifest) {
    heads.insert(f.head_qk);
    if (f.head_v != f.head_qk) asym.insert({f.head_qk, f.head_v});
    dtypes.insert(f.dtype);
    (f.kv == KvKind::kFp8 ? has8 : has16) = true;
  }
  c.head_sizes = {.sizes = std::vector<int>(heads.begin(), heads.end())};
  c.asymmetric_head_sizes.assign(asym.begin(), asym.end());
  c.dtypes.assign(dtypes.begin(), dtypes.end());
  c.kv_cache_dtypes.clear();
  if (has16) {
    c.kv_cache_dtypes.push_back(KvCacheDType::kAuto);
    if (dtypes.count(DType::kFloat16)) c.kv_cache_dtypes.push_back(KvCacheDType::kFloat16);
    if (dtypes.count(DType::kBFloat16)) c.kv_cache_dtypes.push_back(KvCacheDType::kBFloat16);
  }
  if (has8) {
    c.kv_cache_dtypes.push_back(KvCacheDType::kFp8E4M3);
    c.kv_cache_dtypes.push_back(KvCacheDType::kFp8E5M2);
  }
}

std::vector<std::string> manifest_reasons(const LayerSpec& spec,
                                          int (*find)(int head_qk, int head_v, DType, KvKind)) {
  std::vector<std::string> reasons;
  const int hv = spec.head_size_v ? spec.head_size_v : spec.head_size;
  KvKind kind{};
  if (!kv_kind_for(spec.resolved_kv_dtype(), spec.dtype, &kind)) {
    reasons.push_back(fmt::format("kv_cache_dtype {} with dtype {} not built",
                                  to_string(spec.resolved_kv_dtype()), to_string(spec.dtype)));
  } else if (find(spec.head_size, hv, spec.dtype, kind) < 0) {
    reasons.push_back(fmt::format("head_size {}/{} with dtype {} and {} KV not built",
                                  spec.head_size, hv, to_string(spec.dtype),
                                  kind == KvKind::kFp8 ? "fp8" : "16-bit"));
  }
  return reasons;
}

}  // namespace cuda_flash

namespace {

// Everything a manifest states is read off it (declare_manifest, manifest_reasons).
Capabilities v2_caps() {
  Capabilities c;
  c.name = "CUDA_FLASH";
  c.platforms = {Platform::kCuda};
  c.min_compute_capability = 80;
  cuda_flash::declare_manifest(c, cuda_flash::kFlashManifest);
  // The kernel gathers 16-byte chunks of one token's row from any page: every block size works.
  c.kernel_block_sizes = {BlockSizeEntry::multiple_of(1)};
  c.preferred_block_size = 16;
  c.sinks = c.alibi = c.logits_soft_cap = c.sliding_window = c.non_causal = true;
  // PrefixLM: the prefill forms' kMm instantiations, at the heads manifest.hpp builds them for.
  c.mm_prefix = true;
  // Chunked local attention (Llama 4): causal decode batches at head 128 run the decode form's
  // kChunk kernels; other batches run as chunk pieces (tiles.hpp chunk_piece), each a sequence of
  // its own over its chunk's blocks, through the plain masks; so the chunk is a whole number of
  // blocks. Not with PrefixLM ranges, nor on encoder layers (their cu_seqlens_k form has no
  // blocks to start a chunk at).
  c.chunked_local = c.chunk_in_whole_blocks = true;
  c.per_head_quant_scales = true;
  // Encoder self-attention passes contiguous K/V by cu_seqlens_k, which the kernels read as the
  // paged description of it (docs/semantics.md §2: one block per sequence, starting at its
  // cu_seqlens_k offset), so the paged kernels serve it with the non-causal mask.
  c.attn_types = {AttentionType::kDecoder, AttentionType::kEncoder, AttentionType::kEncoderOnly,
                  AttentionType::kCross};
  c.metadata_forms = unsigned(MetadataForm::kSeqUsedK) | unsigned(MetadataForm::kBlockTable) |
                     unsigned(MetadataForm::kCuSeqlensK);
  c.combination = [](const LayerSpec& spec, const DeviceInfo&) {
    std::vector<std::string> reasons =
        cuda_flash::manifest_reasons(spec, cuda_flash::find_flash_instance);
    const int hv = spec.head_size_v ? spec.head_size_v : spec.head_size;
    if (spec.mm_prefix && !cuda_flash::mm_prefix_built(spec.head_size, hv))
      reasons.push_back(fmt::format("mm_prefix with head_size {}/{} not built (heads {})",
                                    spec.head_size, hv,
                                    fmt::join(cuda_flash::kMmPrefixHeads, ", ")));
    if (spec.attention_chunk_size && spec.mm_prefix)
      reasons.push_back("mm_prefix with chunked local attention not supported");
    if (spec.attention_chunk_size && spec.attn_type == AttentionType::kEncoder)
      reasons.push_back("chunked local attention on encoder layers not supported");
    return reasons;
  };
  return c;
}

}  // namespace

const std::vector<KernelGeneration>& cuda_flash_generations() {
  static const std::vector<KernelGeneration> gens = [] {
    // v3 (SM90): the Hopper prefill form's layers (tiles.hpp hopper_prefill_head, 16-bit and fp8
    // caches); their decode steps run v2's decode form. Layers outside it go to v2 with v3's
    // reasons.
    Capabilities v3 = v2_caps();
    v3.min_compute_capability = 90;
    v3.max_compute_capability = 90;
    std::erase_if(v3.head_sizes.sizes,
                  [](int h) { return !cuda_flash::hopper_prefill_head(h, h); });
    std::erase_if(v3.asymmetric_head_sizes,
                  [](auto qv) { return !cuda_flash::hopper_prefill_head(qv.first, qv.second); });
    // v4 is a declaration of what that generation will cover, not built here.
    Capabilities v4 = v2_caps();
    v4.min_compute_capability = 100;
    v4.max_compute_capability = 103;
    v4.combination = nullptr;
    return std::vector<KernelGeneration>{
        {"v2", true, v2_caps()}, {"v3", true, v3}, {"v4", false, v4}};
  }();
  return gens;
}

const Capabilities& cuda_flash_capabilities() {
  static const Capabilities caps = v2_caps();
  return caps;
}

bool cuda_flash_kernels_built() {
#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
  return true;
#else
  return false;
#endif
}

}  // namespace attnkit
