// vLLM's KV-spec consequences of a backend choice (spec §7.1-§7.3): kernel block sizes, the
// preferred block size, per-group kernel block negotiation, hybrid (mamba) block alignment and
// page bytes.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "attnkit/error.hpp"
#include "stacks/vllm/vllm_internal.hpp"

namespace attnkit {
namespace {

const Capabilities& caps_of(std::string_view backend, const VllmConfig& cfg,
                            std::vector<BackendDecl>& storage) {
  storage = vllm::declare_backends(cfg);
  for (const auto& b : storage)
    if (b.name() == backend) return b.caps;
  throw InvalidArgument(fmt::format("vllm stack: backend '{}' is unknown", backend));
}

bool accepts_exactly(const std::vector<BlockSizeEntry>& entries, int b) {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const BlockSizeEntry& e) { return e.accepts_kernel_block(b); });
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::vector<BlockSizeEntry> vllm_kernel_block_sizes(std::string_view backend, const LayerSpec& s,
                                                    const DeviceInfo& d, const VllmConfig& cfg) {
  std::vector<BackendDecl> storage;
  std::vector<BlockSizeEntry> out = caps_of(backend, cfg, storage).kernel_block_sizes;
  // FlashInfer pages 128..1024 through trtllm-gen on SM100 when queries are grouped (GQA > 1).
  if (backend == "FLASHINFER" && vllm_flashinfer_trtllm_usable(s, d, cfg) &&
      s.num_heads > s.num_kv_heads)
    for (int b : {128, 256, 512, 1024}) out.push_back(BlockSizeEntry::exact(b));
  return out;
}

int vllm_preferred_block_size(std::string_view backend, const LayerSpec& s, const DeviceInfo& d,
                              const VllmConfig& cfg, int default_block_size) {
  std::vector<BackendDecl> storage;
  const Capabilities& c = caps_of(backend, cfg, storage);
  // The CPU platform defaults to 128-token blocks (the reference CPU MLA forces 16 below).
  if (d.platform == Platform::kCpu) default_block_size = 128;
  if (backend == "CPU_MLA") return 16;  // forced, overriding the user (with a warning in vLLM)
  if (backend == "FLASH_ATTN" && d.platform == Platform::kXpu)
    return std::max(default_block_size, 64);
  Capabilities adj = c;
  adj.kernel_block_sizes = vllm_kernel_block_sizes(backend, s, d, cfg);
  return adj.preferred_block(default_block_size);
}

int vllm_kernel_block_size(int manager, const std::vector<std::vector<BlockSizeEntry>>& backends) {
  auto all_accept = [&](int b) {
    return std::all_of(backends.begin(), backends.end(),
                       [&](const auto& entries) { return accepts_exactly(entries, b); });
  };
  if (all_accept(manager)) return manager;
  std::vector<int> ints;
  for (const auto& entries : backends)
    for (const auto& e : entries)
      if (!e.multiple) ints.push_back(e.value);
  std::sort(ints.rbegin(), ints.rend());
  for (int b : ints)
    if (b > 0 && manager % b == 0 && all_accept(b)) return b;
  std::vector<std::string> lists;
  for (const auto& entries : backends) lists.push_back(to_string(entries));
  throw Unsupported(
      fmt::format("No common block size for {}. The attention backends of the "
                  "group list kernel block sizes {}",
                  manager, fmt::join(lists, ", ")));
}

HybridAlignment vllm_align_hybrid_block_size(int64_t attn_page_per_token, int64_t mamba_page,
                                             int smallest_kernel_base, int current_block, bool mla,
                                             bool mode_all, int mamba_chunk) {
  if (attn_page_per_token <= 0 || mamba_page <= 0 || current_block <= 0)
    throw InvalidArgument(fmt::format(
        "hybrid block alignment needs positive sizes; got attention page/token {}, mamba page "
        "{}, block {}",
        attn_page_per_token, mamba_page, current_block));
  HybridAlignment out;
  int64_t align = std::max(smallest_kernel_base, current_block);
  if (mla) align = std::max<int64_t>(align, 128);  // TRTLLM / FlashInfer MLA decode
  int64_t block = 0;
  if (mode_all) {
    const int64_t base = mamba_chunk > 0 ? mamba_chunk : align;
    const int64_t chunk = std::lcm(base, align);
    block = chunk * ceil_div(ceil_div(mamba_page, attn_page_per_token), chunk);
  } else {
    block = align * ceil_div(mamba_page, align * attn_page_per_token);
  }
  out.block_size = current_block;
  if (block > current_block) {
    out.block_size = int(block);
    out.raised = true;
    out.logs.push_back(
        fmt::format("Setting attention block size to {} tokens to ensure that "
                    "attention page size is >= mamba page size.",
                    block));
  }
  if (mode_all) out.mamba_block_size = out.block_size;
  out.mamba_page_bytes = int64_t(out.block_size) * attn_page_per_token;
  if (out.mamba_page_bytes > mamba_page) {
    const double pct = 100.0 * double(out.mamba_page_bytes - mamba_page) / double(mamba_page);
    out.logs.push_back(
        fmt::format("Padding mamba page size by {:.2f}% to ensure that mamba page "
                    "size and attention page size are exactly equal.",
                    pct));
  }
  return out;
}

int64_t vllm_page_bytes(std::string_view backend, const LayerSpec& s, int block) {
  const KvCacheDType kv = s.resolved_kv_dtype();
  const bool fp8 = kv == KvCacheDType::kFp8E4M3 || kv == KvCacheDType::kFp8E5M2;
  if (s.is_mla()) {
    // fp8_ds_mla: 656 bytes per token (FlashMLA sparse with fp8; SM120 FlashInfer sparse always).
    if ((backend == "FLASHMLA_SPARSE" && fp8) || backend == "FLASHINFER_MLA_SPARSE_SM120")
      return int64_t(block) * 656;
    return int64_t(block) * kv_bytes_per_head_vector(kv, s.dtype, s.head_size);
  }
  const int hv = s.head_size_v ? s.head_size_v : s.head_size;
  if (kv == KvCacheDType::kNvfp4) {
    // K and V as separate head slots of hs/2 packed bytes plus hs/16 e4m3 scales.
    const int64_t slot_k = s.head_size / 2 + s.head_size / 16, slot_v = hv / 2 + hv / 16;
    return int64_t(s.num_kv_heads) * block * (slot_k + slot_v);
  }
  return int64_t(s.num_kv_heads) * block *
         (kv_bytes_per_head_vector(kv, s.dtype, s.head_size) +
          kv_bytes_per_head_vector(kv, s.dtype, hv));
}

}  // namespace attnkit
