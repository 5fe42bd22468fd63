// The vLLM facts a plan shows beside the selection of a layer (Catalog::plan_details): FA version
// notes, FlashInfer path and kernel view, KV layout, kernel block negotiation, page bytes, CUDA
// graph support and the MLA prefill backend.
#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "stacks/vllm/vllm_internal.hpp"

namespace attnkit::vllm {
namespace {

std::string storage_of(const LayerSpec& s, const std::string& backend, const DeviceInfo& d) {
  switch (s.kv_cache_dtype) {
    case KvCacheDType::kFp8E4M3:
    case KvCacheDType::kFp8E5M2: {
      if (s.is_mla() && (backend == "FLASHMLA_SPARSE" || backend == "FLASHINFER_MLA_SPARSE_SM120"))
        return "uint8 as fp8_ds_mla (656 bytes per token)";
      const bool e5m2 = s.kv_cache_dtype == KvCacheDType::kFp8E5M2;
      const std::string view = e5m2 ? "float8_e5m2"
                               : d.platform == Platform::kRocm && d.arch.rfind("gfx94", 0) == 0
                                   ? "float8_e4m3fnuz"
                                   : "float8_e4m3fn";
      return fmt::format("uint8 ({}, per-tensor scales), viewed as {}", to_string(s.kv_cache_dtype),
                         view);
    }
    case KvCacheDType::kNvfp4:
      return "uint8 (nvfp4: packed e2m1 + e4m3 scales per 16 elements)";
    case KvCacheDType::kAuto:
      if (backend == "FLASHINFER_MLA_SPARSE_SM120")
        return "uint8 as fp8_ds_mla (656 bytes per token)";
      return std::string(to_string(s.dtype)) + " (auto: model dtype)";
    default:
      return std::string(to_string(s.kv_cache_dtype));
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> plan_details(const VllmConfig& cfg,
                                                              const LayerSpec& s,
                                                              const DeviceInfo& d,
                                                              const SelectOptions& o,
                                                              const Selection& sel) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string& b = sel.backend;
  if (b == "FLASH_ATTN" && d.platform == Platform::kCuda) {
    try {
      std::optional<int> req;
      if (o.variant) req = parse_flash_attn_version(*o.variant);
      const int hv = s.head_size_v ? s.head_size_v : s.head_size;
      const FaVersion v = vllm_flash_attn_version(d, cfg, {s.head_size, hv, s.alibi, s.sinks}, req);
      for (const auto& n : v.notes) out.emplace_back("FlashAttention", n);
    } catch (const Error&) {
      // resolve_variant already reported it when the selection was made.
    }
  }
  if (b == "FLASHINFER") out.emplace_back("FlashInfer kernel view", vllm_flashinfer_kernel_view(s));
  if (auto layout = required_kv_layout(b, d))
    out.emplace_back("KV cache layout", *layout + " (required by " + b + "; set process-wide)");
  else
    out.emplace_back("KV cache layout",
                     cfg.use_kv_connector ? "set by the KV connector" : "NHD (default)");
  out.emplace_back("KV storage", storage_of(s, b, d));

  // Block size negotiation (§7.1): user block or the backend's preference, then the kernel
  // block the worker derives for the group.
  try {
    const auto entries = vllm_kernel_block_sizes(b, s, d, cfg);
    out.emplace_back("Kernel block sizes", to_string(entries));
    int manager = 0;
    if (s.block_size) {
      manager = *s.block_size;
      out.emplace_back("Block size", fmt::format("{} (--block-size)", manager));
    } else {
      manager = vllm_preferred_block_size(b, s, d, cfg);
      out.emplace_back("Block size", fmt::format("{} (preferred by {}; default 16{})", manager, b,
                                                 d.platform == Platform::kCpu ? ", CPU 128" : ""));
    }
    try {
      const int kernel = vllm_kernel_block_size(manager, {entries});
      out.emplace_back("Kernel block size",
                       kernel == manager ? std::to_string(kernel)
                                         : fmt::format("{} ({} kernel blocks per {}-token block)",
                                                       kernel, manager / kernel, manager));
      if (s.sliding_window && !s.is_mla()) {
        // get_kv_cache_spec: a sliding-window layer takes the smallest kernel block; page
        // unification then scales it to the group's page.
        int smallest = 0;
        for (const auto& e : entries)
          if (!smallest || e.value < smallest) smallest = e.value;
        out.emplace_back(
            "Sliding-window spec block",
            fmt::format("{} (smallest kernel block; page unification may scale it)", smallest));
      }
      out.emplace_back(
          "Page bytes per layer",
          fmt::format("{} per {}-token block", vllm_page_bytes(b, s, manager), manager));
    } catch (const Unsupported& e) {
      out.emplace_back("Kernel block size", e.what());
    }
  } catch (const Error& e) {
    out.emplace_back("Kernel block sizes", e.what());
  }
  const std::string cg = cudagraph_support(b, s, d, cfg, sel.variant);
  if (!cg.empty()) out.emplace_back("CUDA graph support", cg);

  if (s.is_mla()) {
    try {
      const MlaPrefillChoice p = select_vllm_mla_prefill(s, d, cfg);
      if (p.backend.empty()) {
        out.emplace_back("MLA prefill backend", "none (sparse MLA: top-k MQA path only)");
      } else {
        std::string v = p.backend;
        if (p.fa_version)
          v += fmt::format(" (FA{}{})", *p.fa_version,
                           p.v_zero_padded ? ", V zero-padded to the QK size" : "");
        out.emplace_back("MLA prefill backend", v);
      }
    } catch (const Error& e) {
      out.emplace_back("MLA prefill backend", std::string("none: ") + e.what());
    }
  }
  return out;
}

}  // namespace attnkit::vllm
