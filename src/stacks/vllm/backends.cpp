// vLLM's attention backends as capability data (spec §1.4, §3.1, §3.2) plus the few cross-feature
// rules that the flat fields cannot say. Reason strings are vLLM's.
#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "stacks/vllm/vllm_internal.hpp"

namespace attnkit::vllm {
namespace {

using BS = BlockSizeEntry;
using KV = KvCacheDType;
constexpr DType kF16 = DType::kFloat16, kBF16 = DType::kBFloat16, kF32 = DType::kFloat32;
constexpr AttentionType kDec = AttentionType::kDecoder, kEnc = AttentionType::kEncoder,
                        kEncOnly = AttentionType::kEncoderOnly, kCross = AttentionType::kCross;

const std::vector<KV> k16b = {KV::kAuto, KV::kFloat16, KV::kBFloat16};
const std::vector<KV> k16bFp8 = {KV::kAuto, KV::kFloat16, KV::kBFloat16, KV::kFp8E4M3};
const std::vector<KV> k16bFp8All = {KV::kAuto, KV::kFloat16, KV::kBFloat16, KV::kFp8E4M3,
                                    KV::kFp8E5M2};
const std::vector<AttentionType> kAllTypes = {kDec, kEnc, kEncOnly, kCross};
// vLLM has no metadata-form check: every backend takes what its builder makes.
constexpr unsigned kAllForms = unsigned(MetadataForm::kSeqUsedK) |
                               unsigned(MetadataForm::kBlockTable) |
                               unsigned(MetadataForm::kCuSeqlensK);
const HeadSizeRule kMlaHeads = {{320, 576}};

bool fp8(const LayerSpec& s) {
  return s.kv_cache_dtype == KV::kFp8E4M3 || s.kv_cache_dtype == KV::kFp8E5M2;
}
bool non_causal(const LayerSpec& s, const VllmConfig& cfg) {
  return cfg.use_non_causal || !s.causal();
}

// Defaults of §1.3 that apply to every backend; vLLM validation never refuses ALiBi or softcap
// (FLEX_ATTENTION's impl does, see below).
Capabilities base(std::string name, std::vector<Platform> platforms) {
  Capabilities c;
  c.name = std::move(name);
  c.platforms = std::move(platforms);
  c.alibi = true;
  c.logits_soft_cap = true;
  c.metadata_forms = kAllForms;
  // vLLM's ChunkedLocalAttention wraps whichever backend it selects for the layer (its metadata
  // builder cuts each request into chunk-local virtual batches), so the chunk never enters the
  // selection of a standard attention layer.
  c.chunked_local = true;
  return c;
}

Capabilities mla_base(std::string name, std::vector<Platform> platforms) {
  Capabilities c = base(std::move(name), std::move(platforms));
  c.mla = MlaSupport::kMlaOnly;
  c.chunked_local = false;  // ChunkedLocalAttention is a standard (non-MLA) layer
  c.head_sizes = kMlaHeads;
  c.kv_cache_dtypes = k16bFp8;
  return c;
}

void set_cc(Capabilities& c, int lo, int hi) {
  c.min_compute_capability = lo;
  c.max_compute_capability = hi;
}

// The §1.4 checks the engine does not know, driven by vLLM config inputs and per-backend
// traits, then the backend's own supports_combination.
struct Traits {
  bool batch_invariance = false;
  bool kv_connector = true;
  bool adaptive_verification = true;
};

using Rule = std::function<void(const LayerSpec&, const DeviceInfo&, std::vector<std::string>&)>;

void attach(BackendDecl& b, const VllmConfig& cfg, Traits t, Rule rule = nullptr) {
  const bool nc = b.caps.non_causal;
  std::optional<std::string> probe;
  if (auto it = cfg.probe_errors.find(b.caps.name); it != cfg.probe_errors.end())
    probe = it->second;
  b.caps.combination = [cfg, t, nc, rule, probe](const LayerSpec& s, const DeviceInfo& d) {
    std::vector<std::string> r;
    if (probe) r.push_back(*probe);
    // The engine refuses non-decoder layers itself; the config flag applies to decoder layers.
    if (cfg.use_non_causal && s.causal() && !nc) r.push_back("non-causal attention not supported");
    if (cfg.batch_invariant && !t.batch_invariance) r.push_back("batch invariance not supported");
    if (cfg.use_kv_connector && !t.kv_connector) r.push_back("KV connector not supported");
    if (cfg.adaptive_verification && !t.adaptive_verification)
      r.push_back(
          "device-cpu query lens mismatch not supported, this is needed for adaptive "
          "verification");
    if (rule) rule(s, d, r);
    return r;
  };
}

std::string mla_dims_str(const LayerSpec& s) {
  return fmt::format("({}, {}, {})", s.mla->qk_nope_head_dim, s.mla->qk_rope_head_dim,
                     s.mla->v_head_dim);
}

// A requested FlashAttention version means nothing to the other backends; say so rather than
// drop it silently (the engine does this for backends without a resolver).
void note_ignored_variant(const std::string& backend, const SelectOptions& o, VariantChoice& v) {
  if (o.variant)
    v.warnings.push_back({fmt::format("variant_ignored:{}:{}", backend, *o.variant),
                          fmt::format("variant '{}' ignored: {} has no FlashAttention versions",
                                      *o.variant, backend)});
}

// ---------------------------------------------------------------------------- standard backends

BackendDecl flash_attn(const VllmConfig& cfg) {
  BackendDecl b;
  b.description =
      "FlashAttention FA2/FA3/FA4 by device (XPU: FA2); sinks need FA3/FA4 and cc >= 9.0; FP8 KV "
      "only "
      "with FA3 on SM90 or FA4 on SM100; head <= 256 unless FA4 is built; mm_prefix needs FA4";
  auto& c = b.caps = base("FLASH_ATTN", {Platform::kCuda, Platform::kXpu});
  c.min_compute_capability = 80;
  c.kv_cache_dtypes = k16bFp8;
  c.head_sizes = {{}, 0, cfg.fa4_built ? 512 : 256, 8};
  c.kernel_block_sizes = {BS::multiple_of(16)};  // every model (§7.4: fresh blocks are zeroed)
  c.sinks = c.sliding_window = c.non_causal = c.per_head_quant_scales = c.mm_prefix = true;
  c.attn_types = kAllTypes;
  attach(b, cfg, {.batch_invariance = true},
         [cfg](const LayerSpec& s, const DeviceInfo& d, std::vector<std::string>& r) {
           fa_rules(s, d, cfg, std::nullopt, r);
         });
  b.resolve_variant = [cfg](const LayerSpec& s, const DeviceInfo& d, const SelectOptions& o) {
    return resolve_fa_variant(s, d, cfg, o);
  };
  // The versions behind resolve_variant, for the feature matrix.
  auto gen = [&](const char* name, bool built, int lo, int hi) {
    KernelGeneration g{name, built, c};
    g.caps.name = std::string("FLASH_ATTN ") + name;
    set_cc(g.caps, lo, hi);
    return g;
  };
  b.generations = {gen("FA2", true, 80, 0), gen("FA3", cfg.fa3_built, 90, 90),
                   gen("FA4", cfg.fa4_built, 90, 119)};
  b.generations[0].caps.max_compute_capability.reset();
  return b;
}

BackendDecl flashinfer(const VllmConfig& cfg) {
  BackendDecl b;
  b.description =
      "FlashInfer native / trtllm-gen (SM100) / XQA decode (SM12x); sinks only on trtllm-gen or "
      "XQA; "
      "head 512 and nvfp4 only on trtllm-gen; blocks up to 1024 on SM100 with GQA; HND on SM10x; "
      "no "
      "sliding window on SM90";
  auto& c = b.caps = base("FLASHINFER", {Platform::kCuda});
  set_cc(c, 80, 121);  // floor raised from 7.5: broken on SM75 (#44379)
  c.kv_cache_dtypes = {KV::kAuto,    KV::kFloat16, KV::kBFloat16,
                       KV::kFp8E4M3, KV::kFp8E5M2, KV::kNvfp4};
  c.head_sizes = {{64, 128, 256, 512}};
  c.kernel_block_sizes = {BS::exact(16), BS::exact(32), BS::exact(64)};
  c.sinks = c.sliding_window = c.non_causal = true;
  attach(b, cfg, {.adaptive_verification = false},
         [cfg](const LayerSpec& s, const DeviceInfo& d, std::vector<std::string>& r) {
           const bool trtllm = vllm_flashinfer_trtllm_usable(s, d, cfg);
           // Head 512 exists only for Gemma-4's full layers on the SM100 trtllm-gen path.
           if (s.head_size == 512 && !trtllm) r.push_back("head_size not supported");
           if (s.sinks) {
             const bool xqa = d.cc.major == 12 && cfg.use_trtllm_attention != false;
             if (!trtllm && !xqa) r.push_back("attention sinks not supported");
           }
           // A constructor-time refusal must be a validation reason (#48495 / #48848).
           if (s.sliding_window && d.cc.major == 9)
             r.push_back(
                 "sliding window not supported (FlashInfer backend on SM90 currently crashes "
                 "with sliding-window layers)");
           if (s.kv_cache_dtype == KV::kNvfp4 && !(d.cc.major == 10 && trtllm))
             r.push_back("--kv-cache-dtype nvfp4 requires the SM100 trtllm-gen FlashInfer path");
           if (non_causal(s, cfg) && (cfg.use_dcp || s.kv_cache_dtype == KV::kNvfp4))
             r.push_back("non-causal attention not supported");
           if (!cfg.flashinfer_available) r.push_back("ImportError: No module named 'flashinfer'");
         });
  // The kernel path FlashInfer takes for the layer (the "Version" column of vLLM's matrix).
  b.resolve_variant = [cfg](const LayerSpec& s, const DeviceInfo& d, const SelectOptions& o) {
    VariantChoice v;
    if (vllm_flashinfer_trtllm_usable(s, d, cfg))
      v.variant = "trtllm-gen";
    else if (d.cc.major == 12 && cfg.use_trtllm_attention != false)
      v.variant = "native+XQA";
    else
      v.variant = "native";
    note_ignored_variant("FLASHINFER", o, v);
    return v;
  };
  return b;
}

BackendDecl triton_attn(const VllmConfig& cfg) {
  BackendDecl b;
  b.description =
      "Triton unified attention (any GPU; ALiBi, sinks, fp32); on CUDA fp8 KV needs cc >= 8.9";
  auto& c = b.caps = base("TRITON_ATTN", {Platform::kCuda, Platform::kRocm, Platform::kXpu});
  c.dtypes = {kF16, kBF16, kF32};
  c.kv_cache_dtypes = k16bFp8All;
  c.head_sizes = {{}, 32, 0, 1};
  c.kernel_block_sizes = {BS::multiple_of(16)};
  c.sinks = c.sliding_window = c.non_causal = c.mm_prefix = true;
  c.attn_types = kAllTypes;
  attach(b, cfg, {.batch_invariance = true},
         [](const LayerSpec& s, const DeviceInfo& d, std::vector<std::string>& r) {
           if (d.platform != Platform::kCuda) return;
           // Raised by the impl's constructor in vLLM; stated here so selection cannot pass it.
           if (fp8(s) && d.cc.as_int() < 89)
             r.push_back("fp8 KV cache requires compute capability >= 8.9");
           if (s.resolved_kv_dtype() == KV::kBFloat16 && d.cc.as_int() < 80)
             r.push_back("bfloat16 KV cache requires compute capability >= 8.0");
         });
  // XPU's first-match list sends fp32 here with a warning (§4.5).
  b.resolve_variant = [](const LayerSpec& s, const DeviceInfo& d, const SelectOptions& o) {
    VariantChoice v;
    if (d.platform == Platform::kXpu && s.dtype == kF32)
      v.warnings.push_back({"vllm:xpu_fp32_triton",
                            "FLASH_ATTN on XPU does not support float32; using TRITON_ATTN"});
    note_ignored_variant("TRITON_ATTN", o, v);
    return v;
  };
  return b;
}

BackendDecl flex_attention(const VllmConfig& cfg) {
  BackendDecl b;
  b.description = "PyTorch FlexAttention (fallback; fp32; no ALiBi/softcap/quantized KV)";
  auto& c = b.caps = base("FLEX_ATTENTION", {Platform::kCuda, Platform::kRocm, Platform::kXpu});
  c.dtypes = {kF16, kBF16, kF32};
  c.kv_cache_dtypes = k16b;
  c.kernel_block_sizes = {BS::multiple_of(16)};
  c.sliding_window = c.non_causal = c.mm_prefix = true;
  c.attn_types = {kDec, kEncOnly};
  // vLLM's impl raises on these at construction; refuse them at selection instead.
  c.alibi = c.logits_soft_cap = false;
  attach(b, cfg, {.batch_invariance = true},
         [](const LayerSpec& s, const DeviceInfo&, std::vector<std::string>& r) {
           if (s.kv_sharing_target_layer) r.push_back("KV sharing not supported");
         });
  return b;
}

BackendDecl turboquant(const VllmConfig& cfg) {
  BackendDecl b;
  b.description =
      "TurboQuant packed KV: turboquant_* KV dtypes only (none of attnkit's KV formats)";
  auto& c = b.caps = base("TURBOQUANT", {Platform::kCuda, Platform::kRocm, Platform::kXpu});
  c.kv_cache_dtypes = {};  // checked below: none of attnkit's KV formats is a turboquant_* mode
  c.head_sizes = {{}, 1, 0, 1};
  c.kernel_block_sizes = {BS::exact(16), BS::exact(32), BS::exact(64), BS::exact(128)};
  attach(b, cfg, {}, [](const LayerSpec&, const DeviceInfo&, std::vector<std::string>& r) {
    r.push_back("kv_cache_dtype not supported");
  });
  return b;
}

BackendDecl hpc_attn(const VllmConfig& cfg) {
  BackendDecl b;
  b.description = "Tencent hpc-ops (H20/H200, Hy3 only; never auto-selected)";
  auto& c = b.caps = base("HPC_ATTN", {Platform::kCuda});
  set_cc(c, 90, 90);
  c.kv_cache_dtypes = {KV::kAuto, KV::kBFloat16, KV::kFp8E4M3};
  c.head_sizes = {{128}};
  c.kernel_block_sizes = {BS::exact(64)};
  attach(b, cfg, {});
  return b;
}

BackendDecl cpu_attn(const VllmConfig& cfg) {
  BackendDecl b;
  b.description = "CPU attention (vLLM CPU backend; requires HND; CPU blocks default to 128)";
  auto& c = b.caps = base("CPU_ATTN", {Platform::kCpu});
  c.dtypes = {kF16, kBF16, kF32};
  c.kv_cache_dtypes = {KV::kAuto, KV::kFp8E4M3, KV::kFp8E5M2};
  c.head_sizes = {{32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512}};
  c.kernel_block_sizes = {BS::multiple_of(16)};
  c.sliding_window = c.non_causal = true;
  c.attn_types = kAllTypes;
  attach(b, cfg, {});
  return b;
}

BackendDecl rocm_attn(const VllmConfig& cfg) {
  BackendDecl b;
  b.description = "ROCm paged attention (not with a KV connector)";
  auto& c = b.caps = base("ROCM_ATTN", {Platform::kRocm});
  c.dtypes = {kF16, kBF16, kF32};
  c.kv_cache_dtypes = k16bFp8All;
  c.head_sizes = {{32, 64, 80, 96, 128, 160, 192, 224, 256}};
  c.kernel_block_sizes = {BS::multiple_of(16)};
  c.sliding_window = c.non_causal = c.mm_prefix = true;
  c.attn_types = {kDec, kEnc, kEncOnly};
  attach(b, cfg, {.kv_connector = false});
  return b;
}

Rule needs_aiter(const VllmConfig& cfg) {
  return [cfg](const LayerSpec&, const DeviceInfo&, std::vector<std::string>& r) {
    if (!cfg.rocm_aiter_installed) r.push_back("ImportError: No module named 'aiter'");
  };
}

BackendDecl rocm_aiter_fa(const VllmConfig& cfg) {
  BackendDecl b;
  b.description = "AITER flash attention (CDNA3+; get_name() reports FLASH_ATTN)";
  auto& c = b.caps = base("ROCM_AITER_FA", {Platform::kRocm});
  c.min_compute_capability = 94;  // CDNA > 2: gfx942 (MI300) and newer
  c.kv_cache_dtypes = k16bFp8All;
  c.head_sizes = {{64, 128, 256}};
  c.kernel_block_sizes = {BS::exact(16), BS::exact(32)};
  c.sinks = c.sliding_window = c.non_causal = true;
  attach(b, cfg, {}, needs_aiter(cfg));
  return b;
}

BackendDecl rocm_aiter_unified(const VllmConfig& cfg) {
  BackendDecl b;
  b.description = "AITER unified attention";
  auto& c = b.caps = base("ROCM_AITER_UNIFIED_ATTN", {Platform::kRocm});
  c.kv_cache_dtypes = k16bFp8All;
  c.head_sizes = {{}, 32, 0, 1};
  c.kernel_block_sizes = {BS::multiple_of(16)};
  c.preferred_block_size = 64;
  c.sinks = c.sliding_window = c.mm_prefix = true;
  c.attn_types = kAllTypes;
  attach(b, cfg, {}, needs_aiter(cfg));
  return b;
}

// ---------------------------------------------------------------------------- MLA decode

Rule qk_nope_in(std::vector<int> allowed) {
  return [allowed](const LayerSpec& s, const DeviceInfo&, std::vector<std::string>& r) {
    if (!s.mla) return;
    const int n = s.mla->qk_nope_head_dim;
    if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
      std::vector<std::string> a;
      for (int x : allowed) a.push_back(std::to_string(x));
      r.push_back(
          fmt::format("qk_nope_head_dim {} not supported (supported: {})", n, fmt::join(a, ", ")));
    }
  };
}

Rule all_of(std::vector<Rule> rules) {
  return [rules](const LayerSpec& s, const DeviceInfo& d, std::vector<std::string>& r) {
    for (const auto& f : rules)
      if (f) f(s, d, r);
  };
}

Rule flashinfer_import(const VllmConfig& cfg) {
  return [cfg](const LayerSpec&, const DeviceInfo&, std::vector<std::string>& r) {
    if (!cfg.flashinfer_available) r.push_back("ImportError: No module named 'flashinfer'");
  };
}

Rule needs_index_topk(const VllmConfig& cfg, std::optional<int> exactly = std::nullopt) {
  return [cfg, exactly](const LayerSpec&, const DeviceInfo&, std::vector<std::string>& r) {
    if (cfg.index_topk <= 0)
      r.push_back("sparse MLA requires index_topk");
    else if (exactly && cfg.index_topk != *exactly)
      r.push_back(
          fmt::format("index_topk {} not supported (requires {})", cfg.index_topk, *exactly));
  };
}

std::vector<BackendDecl> mla_backends(const VllmConfig& cfg) {
  std::vector<BackendDecl> out;
  auto add = [&](Capabilities c, std::string desc, Traits t = {}, Rule rule = nullptr) {
    BackendDecl b;
    b.caps = std::move(c);
    b.description = std::move(desc);
    attach(b, cfg, t, std::move(rule));
    out.push_back(std::move(b));
  };
  const std::vector<Platform> cuda = {Platform::kCuda};
  {
    auto c = mla_base("FLASHINFER_MLA", cuda);
    set_cc(c, 100, 109);
    c.kernel_block_sizes = {BS::exact(32), BS::exact(64)};
    c.non_causal = true;
    add(c, "FlashInfer trtllm-gen MLA decode (SM100)", {},
        all_of({qk_nope_in({64, 128, 192}), flashinfer_import(cfg)}));
  }
  {
    auto c = mla_base("TOKENSPEED_MLA", cuda);
    set_cc(c, 100, 109);
    c.kv_cache_dtypes = {KV::kFp8E4M3};
    c.kernel_block_sizes = {BS::exact(32), BS::exact(64)};
    c.non_causal = true;
    add(c, "TokenSpeed MLA decode (SM100, fp8 KV, DeepSeek-R1 dims)", {},
        [cfg](const LayerSpec& s, const DeviceInfo&, std::vector<std::string>& r) {
          if (!cfg.tokenspeed_mla_available)
            r.push_back("ImportError: No module named 'tokenspeed_mla'");
          if (s.mla && !(s.mla->qk_nope_head_dim == 128 && s.mla->qk_rope_head_dim == 64 &&
                         s.mla->v_head_dim == 128))
            r.push_back(
                fmt::format("Model does not have supported MLA dimensions (got {}, "
                            "supported: [(128, 64, 128)])",
                            mla_dims_str(s)));
        });
  }
  {
    auto c = mla_base("CUTLASS_MLA", cuda);
    set_cc(c, 100, 109);
    c.kernel_block_sizes = {BS::exact(128)};
    add(c, "CUTLASS MLA decode (SM100, block 128)");
  }
  {
    auto c = mla_base("FLASH_ATTN_MLA", cuda);
    set_cc(c, 90, 99);
    c.kv_cache_dtypes = k16b;
    c.kernel_block_sizes = {BS::multiple_of(16)};
    add(c, "FlashAttention-3 MLA decode (SM90)", {},
        [cfg](const LayerSpec&, const DeviceInfo&, std::vector<std::string>& r) {
          if (!cfg.fa3_built) r.push_back("FlashAttention MLA requires FA3 on the SM90 family");
        });
  }
  {
    auto c = mla_base("FLASHMLA", cuda);
    set_cc(c, 90, 109);
    c.kernel_block_sizes = {BS::exact(64)};
    add(c, "FlashMLA dense decode (SM90/SM100, block 64)");
  }
  {
    auto c = mla_base("TRITON_MLA", {Platform::kCuda, Platform::kRocm, Platform::kXpu});
    c.head_sizes = {};
    c.kernel_block_sizes = {BS::multiple_of(16)};
    c.non_causal = true;
    add(c, "Triton MLA decode (any GPU)", {.batch_invariance = true});
  }
  {
    auto c = mla_base("FLASHMLA_SPARSE", cuda);
    set_cc(c, 90, 109);
    c.dtypes = {kBF16};
    c.kv_cache_dtypes = {KV::kAuto, KV::kBFloat16, KV::kFp8E4M3};  // fp8 -> fp8_ds_mla
    c.head_sizes = {{576}};
    c.kernel_block_sizes = {BS::exact(64)};
    c.sparse = true;
    add(c, "FlashMLA sparse (DeepSeek sparse attention; fp8 stored as fp8_ds_mla)");
  }
  {
    auto c = mla_base("FLASHINFER_MLA_SPARSE", cuda);
    set_cc(c, 100, 109);
    c.head_sizes = {{576}};
    c.kernel_block_sizes = {BS::exact(32), BS::exact(64)};
    c.sparse = true;
    add(c, "FlashInfer trtllm-gen sparse MLA (SM100)", {},
        all_of({qk_nope_in({128, 192}), needs_index_topk(cfg), flashinfer_import(cfg)}));
  }
  {
    auto c = mla_base("FLASHINFER_MLA_SPARSE_SM120", cuda);
    set_cc(c, 120, 129);
    c.dtypes = {kBF16};
    c.kv_cache_dtypes = {KV::kAuto, KV::kFp8E4M3};  // all stored as fp8_ds_mla
    c.head_sizes = {};
    c.kernel_block_sizes = {BS::exact(64), BS::exact(256)};
    c.sparse = true;
    add(c, "FlashInfer sparse MLA for SM12x (fp8_ds_mla)", {},
        all_of({needs_index_topk(cfg, 2048), flashinfer_import(cfg)}));
  }
  {
    auto c = mla_base("FLASH_ATTN_MLA_SPARSE", cuda);
    set_cc(c, 90, 99);
    c.kv_cache_dtypes = k16b;
    c.head_sizes = {};
    c.kernel_block_sizes = {BS::exact(64)};
    c.sparse = true;
    add(c, "FlashAttention-3 sparse MLA (SM90)", {},
        all_of({needs_index_topk(cfg),
                [cfg](const LayerSpec&, const DeviceInfo&, std::vector<std::string>& r) {
                  if (cfg.use_dcp) r.push_back("DCP not supported");
                }}));
  }
  const std::vector<Platform> rocm = {Platform::kRocm};
  for (const char* n : {"ROCM_AITER_MLA", "ROCM_AITER_TRITON_MLA"}) {
    auto c = mla_base(n, rocm);
    c.kv_cache_dtypes = k16bFp8All;
    c.head_sizes = {};
    c.kernel_block_sizes = {BS::multiple_of(1)};
    add(c, "AITER MLA decode (ROCm)", {}, needs_aiter(cfg));
  }
  {
    auto c = mla_base("ROCM_AITER_MLA_SPARSE", rocm);
    c.head_sizes = {};
    c.kernel_block_sizes = {BS::exact(1), BS::multiple_of(16)};
    c.sparse = true;
    add(c, "AITER sparse MLA (ROCm)", {}, needs_aiter(cfg));
  }
  {
    auto c = mla_base("XPU_MLA_SPARSE", {Platform::kXpu});
    c.kv_cache_dtypes = k16b;
    c.head_sizes = {{576}};
    c.sparse = true;
    add(c, "XPU sparse MLA");
  }
  {
    auto c = mla_base("CPU_MLA", {Platform::kCpu});
    c.dtypes = {kF16, kBF16, kF32};
    c.kv_cache_dtypes = {KV::kAuto};
    c.head_sizes = {{576}};
    c.kernel_block_sizes = {BS::exact(16)};
    add(c, "CPU reference MLA (forces block 16)");
  }
  {
    auto c = mla_base("AMX_MLA", {Platform::kCpu});
    c.dtypes = {kBF16};
    c.kv_cache_dtypes = k16b;
    c.head_sizes = {{576}};
    c.kernel_block_sizes = {BS::multiple_of(32)};
    add(c, "AMX MLA (x86 with AMX tiles)", {},
        [](const LayerSpec&, const DeviceInfo& d, std::vector<std::string>& r) {
          if (!d.has_amx) r.push_back("AMX tiles not available on this CPU");
        });
  }
  return out;
}

}  // namespace

std::vector<BackendDecl> declare_backends(const VllmConfig& cfg) {
  std::vector<BackendDecl> out = {flash_attn(cfg),        flashinfer(cfg), triton_attn(cfg),
                                  flex_attention(cfg),    turboquant(cfg), hpc_attn(cfg),
                                  cpu_attn(cfg),          rocm_attn(cfg),  rocm_aiter_fa(cfg),
                                  rocm_aiter_unified(cfg)};
  for (auto& b : mla_backends(cfg)) out.push_back(std::move(b));
  return out;
}

// FLASH_ATTN's version-dependent checks (§5.3, §5.4). `version` is the resolved one when known
// (resolve_variant), else computed the way vLLM's backend-level checks do.
void fa_rules(const LayerSpec& s, const DeviceInfo& d, const VllmConfig& cfg,
              std::optional<int> requested, std::vector<std::string>& r) {
  const bool xpu = d.platform == Platform::kXpu;
  auto version = [&](FaVersionQuery q) -> std::optional<int> {
    try {
      return vllm_flash_attn_version(d, cfg, q, requested).version;
    } catch (const Unsupported&) {
      return std::nullopt;
    }
  };
  if (s.sinks) {
    // supports_sink() asks for the version with no layer arguments.
    const auto v = version({});
    if (!xpu && !(v == 3 || v == 4)) r.push_back("attention sinks not supported");
    if (d.platform == Platform::kCuda && d.cc.as_int() < 90)
      r.push_back("sink not supported on compute capability < 9.0");
  }
  const auto v_layer = version({s.head_size, s.head_size, false, false});
  if (fp8(s)) {
    const bool ok = xpu || (v_layer == 3 && d.cc.major == 9) || (v_layer == 4 && d.cc.major == 10);
    if (!ok) r.push_back("FP8 KV cache requires FA3 on SM90 or FA4 on SM100");
  }
  if (s.kv_scale_granularity == ScaleGranularity::kPerHead && !(v_layer && *v_layer >= 3))
    r.push_back("per-head quant scales not supported");
  // XPU does not validate; its platform warns that the mask cannot be applied (§4.5).
  if (s.mm_prefix && !xpu && v_layer != 4)
    r.push_back(
        "mm_prefix (PrefixLM bidirectional attention) requires FlashAttention v4, which does not "
        "resolve for this head_size");
}

VariantChoice resolve_fa_variant(const LayerSpec& s, const DeviceInfo& d, const VllmConfig& cfg,
                                 const SelectOptions& o) {
  std::optional<int> requested;
  if (o.variant) requested = parse_flash_attn_version(*o.variant);
  // The impl computes the version per layer with ALiBi and sinks known.
  const int hv = s.head_size_v ? s.head_size_v : s.head_size;
  FaVersion v = vllm_flash_attn_version(d, cfg, {s.head_size, hv, s.alibi, s.sinks}, requested);
  VariantChoice out;
  out.warnings = std::move(v.warnings);
  if (!v.version) return out;  // ROCm: no version argument
  out.variant = fmt::format("FA{}", *v.version);
  if (requested) {
    // A requested version must still satisfy what validation assumed of the default one.
    std::vector<std::string> r;
    fa_rules(s, d, cfg, requested, r);
    if (!r.empty())
      throw Unsupported(fmt::format("Selected backend FLASH_ATTN with FlashAttention version {} "
                                    "is not valid for this configuration on {} (layer {}). "
                                    "Reason: [{}]",
                                    *requested, d.name, s.signature(), fmt::join(r, ", ")),
                        {{"FLASH_ATTN", r}});
  }
  return out;
}

}  // namespace attnkit::vllm
