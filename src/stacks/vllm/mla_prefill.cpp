// vLLM's MLA prefill selector (spec §6): a second small catalog run through the same Selector,
// with its own priority lists, reasons and error wording.
#include <fmt/format.h>

#include <algorithm>

#include "attnkit/error.hpp"
#include "attnkit/log.hpp"
#include "core/strings.hpp"
#include "stacks/vllm/vllm_internal.hpp"

namespace attnkit {
namespace {

using Dims = std::tuple<int, int, int>;  // (qk_nope, qk_rope, v)
constexpr Dims kDeepSeek{128, 64, 128}, kGlm{192, 64, 256}, kMistralS4{64, 64, 128};

Dims dims_of(const LayerSpec& s) {
  if (!s.mla) return {0, 0, 0};
  return {s.mla->qk_nope_head_dim, s.mla->qk_rope_head_dim, s.mla->v_head_dim};
}
std::string dims_str(const Dims& d) {
  return fmt::format("({}, {}, {})", std::get<0>(d), std::get<1>(d), std::get<2>(d));
}

struct PrefillDecl {
  const char* name;
  const char* description;
  std::vector<Platform> platforms;  // where its dependencies exist
  std::optional<int> cc_major;      // 10: SM100 family only
  std::optional<int> min_cc;        // ROCm AITER: MI3xx
  std::vector<DType> dtypes;
  std::vector<Dims> dims;  // empty: any
};

BackendDecl make(const PrefillDecl& p, const VllmConfig& cfg) {
  BackendDecl b;
  b.description = p.description;
  Capabilities& c = b.caps;
  c.name = p.name;
  // The prefill selector checks only cc, dtype, dependencies and dims; everything else passes.
  c.dtypes = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};
  c.kv_cache_dtypes = {};
  c.mla = MlaSupport::kMlaOnly;
  c.sinks = c.alibi = c.logits_soft_cap = c.sliding_window = c.non_causal = true;
  c.per_head_quant_scales = c.mm_prefix = true;
  c.attn_types = {AttentionType::kDecoder, AttentionType::kEncoder, AttentionType::kEncoderOnly,
                  AttentionType::kCross};
  c.metadata_forms = unsigned(MetadataForm::kSeqUsedK) | unsigned(MetadataForm::kBlockTable) |
                     unsigned(MetadataForm::kCuSeqlensK);
  c.combination = [p, cfg](const LayerSpec& s, const DeviceInfo& d) {
    std::vector<std::string> r;
    const bool gpu = d.platform == Platform::kCuda || d.platform == Platform::kRocm;
    if (gpu &&
        ((p.cc_major && d.cc.major != *p.cc_major) || (p.min_cc && d.cc.as_int() < *p.min_cc)))
      r.push_back(fmt::format("compute capability {}.{} not supported", d.cc.major, d.cc.minor));
    if (std::find(p.dtypes.begin(), p.dtypes.end(), s.dtype) == p.dtypes.end())
      r.push_back(fmt::format("dtype {} not supported", to_string(s.dtype)));
    bool deps = std::find(p.platforms.begin(), p.platforms.end(), d.platform) != p.platforms.end();
    const std::string n = p.name;
    if ((n == "TRTLLM_RAGGED" || n == "FLASHINFER") && !cfg.flashinfer_available) deps = false;
    if (n == "TOKENSPEED_MLA" && !cfg.tokenspeed_mla_available) deps = false;
    if (n == "ROCM_AITER_FA" && !(cfg.rocm_aiter && cfg.rocm_aiter_installed)) deps = false;
    if (!deps) r.push_back("required dependencies not available");
    if (!p.dims.empty() && std::find(p.dims.begin(), p.dims.end(), dims_of(s)) == p.dims.end()) {
      std::vector<std::string> sup;
      for (const auto& x : p.dims) sup.push_back(dims_str(x));
      r.push_back(
          fmt::format("Model does not have supported MLA dimensions (got {}, supported: "
                      "[{}])",
                      dims_str(dims_of(s)), join(sup)));
    }
    return r;
  };
  return b;
}

std::vector<std::string> prefill_priorities(const VllmConfig& cfg, const LayerSpec& s,
                                            const DeviceInfo& d) {
  switch (d.platform) {
    case Platform::kCpu:
      return {"CPU_NATIVE"};  // no device capability
    case Platform::kRocm: {
      std::vector<std::string> l;
      if (cfg.rocm_aiter && d.cc.as_int() >= 94) l.push_back("ROCM_AITER_FA");
      l.push_back("FLASH_ATTN");
      return l;
    }
    case Platform::kCuda:
      if (d.cc.major == 10) {
        // GLM-5 dims: FA would resolve head 256 to FA2 on Blackwell at the baseline.
        if (dims_of(s) == kGlm)
          return {"TRTLLM_RAGGED", "FLASH_ATTN", "FLASHINFER", "TOKENSPEED_MLA"};
        return {"FLASH_ATTN", "TRTLLM_RAGGED", "FLASHINFER", "TOKENSPEED_MLA"};
      }
      return {"FLASH_ATTN"};
    case Platform::kXpu:
      return {"FLASH_ATTN"};
  }
  return {"FLASH_ATTN"};
}

std::string selector_config(const LayerSpec& s) {
  const Dims d = dims_of(s);
  return fmt::format(
      "MLAPrefillSelectorConfig(dtype={}, mla_dims=MLADimensions(qk_nope_head_dim={}, "
      "qk_rope_head_dim={}, v_head_dim={}))",
      to_string(s.dtype), std::get<0>(d), std::get<1>(d), std::get<2>(d));
}

}  // namespace

Catalog make_vllm_mla_prefill_catalog(const VllmConfig& cfg) {
  const std::vector<DType> half = {DType::kFloat16, DType::kBFloat16};
  const std::vector<Platform> gpus = {Platform::kCuda, Platform::kRocm, Platform::kXpu};
  const std::vector<PrefillDecl> decls = {
      {"FLASH_ATTN",
       "FlashAttention varlen over decompressed K/V",
       gpus,
       std::nullopt,
       std::nullopt,
       half,
       {kDeepSeek, kGlm, kMistralS4}},
      {"TRTLLM_RAGGED",
       "FlashInfer trtllm_ragged_attention_deepseek (SM100)",
       {Platform::kCuda},
       10,
       std::nullopt,
       half,
       {kDeepSeek, kGlm}},
      {"FLASHINFER",
       "FlashInfer ragged prefill wrapper (SM100)",
       {Platform::kCuda},
       10,
       std::nullopt,
       half,
       {kDeepSeek}},
      {"TOKENSPEED_MLA",
       "tokenspeed_mla prefill (SM100)",
       {Platform::kCuda},
       10,
       std::nullopt,
       half,
       {kDeepSeek}},
      {"ROCM_AITER_FA",
       "AITER flash attention prefill (MI3xx)",
       {Platform::kRocm},
       std::nullopt,
       94,
       half,
       {}},
      {"CPU_NATIVE",
       "CPU native MLA prefill",
       {Platform::kCpu},
       std::nullopt,
       std::nullopt,
       {DType::kFloat16, DType::kBFloat16, DType::kFloat32},
       {}},
  };
  Catalog c;
  c.name = "vllm-mla-prefill";
  for (const auto& p : decls) c.backends.push_back(make(p, cfg));
  c.priorities = [cfg](const LayerSpec& s, const DeviceInfo& d) {
    return prefill_priorities(cfg, s, d);
  };
  return c;
}

const Catalog& vllm_mla_prefill_catalog() {
  static const Catalog catalog = make_vllm_mla_prefill_catalog({});
  return catalog;
}

MlaPrefillChoice select_vllm_mla_prefill(const LayerSpec& spec, const DeviceInfo& device,
                                         const VllmConfig& cfg) {
  if (!spec.is_mla())
    throw InvalidArgument(
        fmt::format("MLA prefill selection needs an MLA layer; layer {} has no MLA dimensions",
                    spec.signature()));
  MlaPrefillChoice out;
  // Sparse MLA impls have no dense-MHA prefill path: prefill runs through the top-k MQA path.
  if (spec.is_sparse()) {
    out.warnings.push_back({"vllm:sparse_mla_no_prefill",
                            "Sparse MLA layer has no dense MHA prefill backend; using the top-k "
                            "MQA path only"});
    return out;
  }
  const Catalog catalog = make_vllm_mla_prefill_catalog(cfg);
  SelectOptions opts;
  if (cfg.mla_prefill_backend && !iequals(*cfg.mla_prefill_backend, "auto")) {
    if (!catalog.find(*cfg.mla_prefill_backend))
      throw InvalidArgument(fmt::format("Unknown MLA prefill backend: '{}'. Valid options are: {}",
                                        *cfg.mla_prefill_backend, join(catalog.names())));
    opts.backend = catalog.find(*cfg.mla_prefill_backend)->name();
  }
  Selector selector(catalog, device, opts);
  try {
    const Selection& sel = selector.select(spec);
    out.backend = sel.backend;
    out.rejected = sel.rejected;
    out.warnings = sel.warnings;
  } catch (const Unsupported& e) {
    if (opts.backend) {
      const auto it = e.reasons().find(*opts.backend);
      const std::vector<std::string> r =
          it == e.reasons().end() ? std::vector<std::string>{} : it->second;
      throw Unsupported(fmt::format("Selected MLA prefill backend {} is not valid for this "
                                    "configuration. Reason: [{}]",
                                    *opts.backend, join(r)),
                        e.reasons());
    }
    std::vector<std::string> parts;
    for (const auto& [name, reasons] : e.reasons())
      parts.push_back(fmt::format("{}: [{}]", name, join(reasons)));
    throw Unsupported(fmt::format("No valid MLA prefill backend found with {}. Reasons: {{{}}}.",
                                  selector_config(spec), join(parts)),
                      e.reasons());
  }
  if (out.backend == "FLASH_ATTN") {
    // Prefill runs FA over (qk_nope + rope, v); V is zero-padded to the QK size unless the
    // kernel takes different V sizes (FA3 on SM9x, or FA4).
    const auto& m = *spec.mla;
    FaVersion v = vllm_flash_attn_version(
        device, cfg, {m.qk_nope_head_dim + m.qk_rope_head_dim, m.v_head_dim, false, false});
    out.fa_version = v.version;
    for (auto& w : v.warnings) {
      warn_once(w.cause, w.message);
      out.warnings.push_back(std::move(w));
    }
    out.v_zero_padded = out.fa_version && m.v_head_dim != m.prefill_qk_head_size() &&
                        !((*out.fa_version == 3 && device.cc.major == 9) || *out.fa_version == 4);
  }
  return out;
}

}  // namespace attnkit
