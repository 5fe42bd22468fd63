// The vLLM catalog: backends (backends.cpp), per-platform priority lists (spec §4.3-§4.5), the
// explicit-choice rules of the CPU and XPU platforms, and the plan facts (§3.3, §3.4, §6, §7).
#include <fmt/format.h>

#include <algorithm>

#include "attnkit/error.hpp"
#include "core/strings.hpp"
#include "stacks/stacks.hpp"
#include "stacks/vllm/vllm_internal.hpp"

namespace attnkit {
namespace vllm {
namespace {

bool quantized_kv(const LayerSpec& s) {
  return s.kv_cache_dtype == KvCacheDType::kFp8E4M3 || s.kv_cache_dtype == KvCacheDType::kFp8E5M2 ||
         s.kv_cache_dtype == KvCacheDType::kNvfp4;
}

// RDNA GPUs (gfx11, gfx12) put AITER unified attention first.
bool rdna(const DeviceInfo& d) {
  return d.arch.rfind("gfx11", 0) == 0 || d.arch.rfind("gfx12", 0) == 0;
}

std::vector<std::string> cuda_priorities(const VllmConfig& cfg, const LayerSpec& s,
                                         const DeviceInfo& d) {
  const int major = d.cc.major;
  if (!s.is_mla()) {
    if (major == 10 && !cfg.use_non_causal)
      return {"FLASHINFER", "FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT"};
    return {"FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT"};
  }
  // Dense and sparse MLA share one list; the MLA/sparse mismatch reasons filter it.
  if (major == 10) {
    std::vector<std::string> l = {"FLASHINFER_MLA", "TOKENSPEED_MLA", "CUTLASS_MLA",
                                  "FLASH_ATTN_MLA", "FLASHMLA",       "TRITON_MLA"};
    const bool flashinfer_first = quantized_kv(s) || s.num_heads <= 16;
    if (flashinfer_first) {
      l.push_back("FLASHINFER_MLA_SPARSE");
      l.push_back("FLASHMLA_SPARSE");
    } else {
      l.push_back("FLASHMLA_SPARSE");
      l.push_back("FLASHINFER_MLA_SPARSE");
    }
    return l;
  }
  if (major == 12) return {"TRITON_MLA", "FLASHINFER_MLA_SPARSE_SM120"};
  return {"FLASH_ATTN_MLA",        "FLASHMLA",       "FLASHINFER_MLA", "TRITON_MLA",
          "FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE"};
}

std::vector<std::string> rocm_priorities(const VllmConfig& cfg, const LayerSpec& s,
                                         const DeviceInfo& d) {
  if (s.is_sparse()) return {"ROCM_AITER_MLA_SPARSE"};
  if (s.is_mla()) {
    if (cfg.rocm_aiter) return {"ROCM_AITER_MLA", "TRITON_MLA", "ROCM_AITER_TRITON_MLA"};
    return {"TRITON_MLA"};
  }
  std::vector<std::string> l;
  const bool unified = cfg.rocm_aiter_installed;
  if (unified && rdna(d)) l.push_back("ROCM_AITER_UNIFIED_ATTN");
  // ROCM_ATTN is omitted with a KV connector and for encoder-decoder models (cross layers).
  if (!cfg.use_kv_connector && s.attn_type != AttentionType::kCross) l.push_back("ROCM_ATTN");
  if (cfg.rocm_aiter) l.push_back("ROCM_AITER_FA");
  if (unified && !rdna(d)) l.push_back("ROCM_AITER_UNIFIED_ATTN");
  l.push_back("TRITON_ATTN");
  l.push_back("TURBOQUANT");
  return l;
}

std::vector<std::string> cpu_priorities(const LayerSpec& s, const DeviceInfo& d) {
  if (s.is_sparse()) return {};  // vLLM: NotImplementedError
  if (s.is_mla()) return {d.has_amx && d.arch == "x86_64" ? "AMX_MLA" : "CPU_MLA"};
  return {"CPU_ATTN"};
}

// XPU: first match wins (§4.5). Turboquant KV is not representable in attnkit's KV formats.
std::vector<std::string> xpu_priorities(const LayerSpec& s) {
  if (s.is_sparse()) return {"XPU_MLA_SPARSE"};
  if (s.is_mla()) return {"TRITON_MLA"};
  if (s.mm_prefix || s.dtype == DType::kFloat32) return {"TRITON_ATTN"};
  return {"FLASH_ATTN"};
}

// The CPU and XPU platforms do not validate an explicit choice the way CUDA does: CPU ignores any
// other backend with a log line, XPU's first-match rules run before the request is looked at.
std::optional<ExplicitRedirect> redirect_explicit(const VllmConfig& cfg, std::string_view requested,
                                                  const LayerSpec& s, const DeviceInfo& d) {
  const std::string req(requested);
  if (d.platform == Platform::kCpu) {
    const std::string natural = cpu_priorities(s, d).empty() ? "" : cpu_priorities(s, d)[0];
    if (s.is_mla() && (req == "CPU_MLA" || req == "AMX_MLA")) return std::nullopt;
    if (natural.empty() || req == natural) return std::nullopt;
    return ExplicitRedirect{natural, Warning{fmt::format("vllm:cpu_ignores:{}", req),
                                             fmt::format("Cannot use {} backend on CPU.", req)}};
  }
  if (d.platform == Platform::kXpu) {
    if (s.is_sparse()) return ExplicitRedirect{"XPU_MLA_SPARSE", std::nullopt};
    if (s.is_mla()) return ExplicitRedirect{"TRITON_MLA", std::nullopt};
    if (req == "TRITON_ATTN") return std::nullopt;
    if (s.mm_prefix) {
      if (req == "FLASH_ATTN")
        return ExplicitRedirect{
            "FLASH_ATTN",
            Warning{"vllm:xpu_fa_mm_prefix",
                    "FLASH_ATTN on XPU was requested for a PrefixLM multimodal model: the "
                    "bidirectional multimodal-prefix mask cannot be applied; results will differ"}};
      return ExplicitRedirect{"TRITON_ATTN", std::nullopt};
    }
    if (s.dtype == DType::kFloat32) return ExplicitRedirect{"TRITON_ATTN", std::nullopt};
    if (req == "FLASH_ATTN") return std::nullopt;
    throw Unsupported(fmt::format("Invalid attention backend for xpu, with use_mla: {}: {}",
                                  s.is_mla() ? "True" : "False", req),
                      {{req, {"not supported on xpu"}}});
  }
  (void)cfg;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> priorities(const VllmConfig& cfg, const LayerSpec& s,
                                    const DeviceInfo& d) {
  switch (d.platform) {
    case Platform::kCuda:
      return cuda_priorities(cfg, s, d);
    case Platform::kRocm:
      return rocm_priorities(cfg, s, d);
    case Platform::kCpu:
      return cpu_priorities(s, d);
    case Platform::kXpu:
      return xpu_priorities(s);
  }
  return {};
}

std::optional<std::string> required_kv_layout(const std::string& b, const DeviceInfo& d) {
  if (b == "FLASHINFER" && d.cc.major == 10) return "HND";
  if (b == "CPU_ATTN" || b == "FLASHINFER_MLA" || b == "TOKENSPEED_MLA" ||
      b == "FLASHINFER_MLA_SPARSE")
    return "HND";
  if (b == "HPC_ATTN") return "NHD";
  return std::nullopt;
}

std::string cudagraph_support(const std::string& b, const LayerSpec& s, const DeviceInfo& d,
                              const VllmConfig& cfg, const std::string& variant) {
  if (d.platform == Platform::kCpu) return "";
  if (b == "FLASH_ATTN") return variant == "FA3" ? "ALWAYS" : "UNIFORM_BATCH";
  if (b == "FLASHINFER") {
    const int major = d.cc.major;
    if (major == 9 || (major == 12 && cfg.use_dcp)) return "UNIFORM_SINGLE_TOKEN_DECODE";
    const bool trtllm_decode = (major == 10 || major == 12) && cfg.use_trtllm_attention != false &&
                               s.num_kv_heads > 0 && s.num_heads % s.num_kv_heads == 0;
    if (trtllm_decode && (major == 12 || !cfg.use_non_causal)) return "UNIFORM_BATCH";
    return "UNIFORM_SINGLE_TOKEN_DECODE";
  }
  if (b == "TRITON_ATTN" || b == "FLEX_ATTENTION" || b == "ROCM_ATTN") return "ALWAYS";
  if (b == "CUTLASS_MLA" || b == "TRITON_MLA") return "UNIFORM_SINGLE_TOKEN_DECODE";
  if (b == "XPU_MLA_SPARSE") return "NEVER";
  if (b == "ROCM_AITER_UNIFIED_ATTN" || b == "HPC_ATTN") return "";
  return "UNIFORM_BATCH";
}

}  // namespace vllm

bool vllm_flashinfer_trtllm_usable(const LayerSpec& s, const DeviceInfo& d, const VllmConfig& cfg) {
  return d.platform == Platform::kCuda && d.cc.major == 10 && cfg.flashinfer_available &&
         cfg.use_trtllm_attention != false && s.num_kv_heads > 0 &&
         s.num_heads % s.num_kv_heads == 0;
}

std::string vllm_flashinfer_kernel_view(const LayerSpec& s) {
  switch (s.kv_cache_dtype) {
    case KvCacheDType::kFp8E4M3:
      return "float8_e4m3fn (uint8 storage re-viewed before the call; FlashInfer reads a bare "
             "uint8 cache as NVFP4)";
    case KvCacheDType::kFp8E5M2:
      return "float8_e5m2 (uint8 storage re-viewed before the call; FlashInfer reads a bare uint8 "
             "cache as NVFP4)";
    case KvCacheDType::kNvfp4:
      return "nvfp4 (packed e2m1, one fp8 e4m3 scale per 16 elements; K and V in separate head "
             "slots)";
    default:
      return std::string(to_string(s.dtype));
  }
}

std::string_view vllm_kv_group_kind(const LayerSpec& s) {
  if (s.attn_type == AttentionType::kEncoderOnly) return "encoder_only_attention";
  if (s.attn_type == AttentionType::kCross) return "cross_attention";
  if (s.is_mla()) return s.sliding_window ? "sliding_window_mla" : "mla_attention";
  if (s.attention_chunk_size) return "chunked_local_attention";
  return s.sliding_window ? "sliding_window" : "full_attention";
}

std::optional<std::string> vllm_backend_for_layer(const LayerSpec& s, const VllmConfig& cfg,
                                                  const std::optional<std::string>& global) {
  static const std::vector<std::string> kKinds = {
      "full_attention", "mla_attention",           "sliding_window",      "sliding_window_mla",
      "mamba",          "chunked_local_attention", "sink_full_attention", "encoder_only_attention",
      "cross_attention"};
  for (const auto& [kind, backend] : cfg.backend_per_kind)
    if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end())
      throw InvalidArgument(
          fmt::format("Unknown KV cache group kind '{}' in backend_per_kind. Valid kinds are: {}",
                      kind, join(kKinds)));
  std::optional<std::string> chosen = global;
  if (auto it = cfg.backend_per_kind.find(std::string(vllm_kv_group_kind(s)));
      it != cfg.backend_per_kind.end())
    chosen = it->second;
  if (chosen && (chosen->empty() || iequals(*chosen, "auto"))) chosen.reset();
  return chosen;
}

Catalog make_vllm_catalog(const VllmConfig& cfg) {
  Catalog c;
  c.name = "vllm";
  c.backends = vllm::declare_backends(cfg);
  c.priorities = [cfg](const LayerSpec& s, const DeviceInfo& d) {
    return vllm::priorities(cfg, s, d);
  };
  c.redirect_explicit = [cfg](std::string_view req, const LayerSpec& s, const DeviceInfo& d) {
    return vllm::redirect_explicit(cfg, req, s, d);
  };
  c.plan_details = [cfg](const LayerSpec& s, const DeviceInfo& d, const SelectOptions& o,
                         const Selection& sel) { return vllm::plan_details(cfg, s, d, o, sel); };
  // FLASH_ATTN's FlashAttention versions are the stack's only variants.
  c.check_variant = [](std::string_view v) { parse_flash_attn_version(v); };
  // Platform.supported_dtypes: CUDA by compute capability (bfloat16 from 8.0, float16 from 6.0);
  // ROCm, XPU and x86/aarch64 CPUs the base list.
  c.platform_dtypes = [](const DeviceInfo& d) -> std::vector<DType> {
    if (d.platform == Platform::kCuda && d.cc.major < 8)
      return d.cc.major >= 6 ? std::vector<DType>{DType::kFloat16, DType::kFloat32}
                             : std::vector<DType>{DType::kFloat32};
    return {DType::kBFloat16, DType::kFloat16, DType::kFloat32};
  };
  c.refuses_unstable_float16 = true;
  return c;
}

const Catalog& vllm_catalog() {
  static const Catalog catalog = make_vllm_catalog({});
  return catalog;
}

}  // namespace attnkit
