// The vLLM stack: vLLM's attention backend layer (baseline: upstream main, 2026-08-20) expressed
// as a Catalog for the one selection engine. Behaviour follows
// shared/reference/vllm-attention-spec.md; section numbers below refer to it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/capability.hpp"
#include "attnkit/selector.hpp"

namespace attnkit {

// vLLM inputs that are engine/config level rather than per layer (§4.1, §4.2). The defaults are
// a stock CUDA wheel with FA3/FA4 and FlashInfer importable and no optional packages.
struct VllmConfig {
  bool use_non_causal = false;                     // attention_config.use_non_causal
  bool use_kv_connector = false;                   // a KV-transfer config is set
  bool batch_invariant = false;                    // VLLM_BATCH_INVARIANT
  bool use_pcp = false;                            // prefill context parallel > 1
  bool use_dcp = false;                            // decode context parallel > 1
  bool adaptive_verification = false;              // spec decode with adaptive verification
  bool diffusion_model = false;                    // per-sequence dynamic causal (needs FA4)
  std::optional<int> flash_attn_version;           // attention_config.flash_attn_version (2, 3, 4)
  std::optional<bool> use_trtllm_attention;        // None = auto
  std::optional<std::string> mla_prefill_backend;  // attention_config.mla_prefill_backend
  bool fa3_built = true;                           // vendored FA3 (Hopper) importable
  bool fa4_built = true;                           // FA4 (CuTe DSL) importable
  bool flashinfer_available = true;                // flashinfer importable
  bool tokenspeed_mla_available = false;           // optional `tokenspeed_mla` package
  bool rocm_aiter = false;                         // VLLM_ROCM_USE_AITER (AITER MHA/MLA enabled)
  bool rocm_aiter_installed = true;                // the aiter package is found
  int index_topk = 2048;                           // sparse-MLA indexer top-k (DeepSeek V3.2)
  // Environment failures met while probing a backend, as "<ExcType>: <msg>" (ImportError,
  // OSError, PermissionError such as an unwritable FlashInfer cache, #51703): recorded as that
  // backend's reason while probing continues; an explicit choice of it fails with the cause.
  std::map<std::string, std::string> probe_errors;
  // attention_config.backend_per_kind: KV-group kind -> backend, overriding the global choice.
  std::map<std::string, std::string> backend_per_kind;
};

// The KV-group kind of a layer (§4.2): encoder_only_attention, cross_attention,
// sliding_window_mla, mla_attention, sliding_window or full_attention (sinks do not change it).
std::string_view vllm_kv_group_kind(const LayerSpec& spec);
// The explicit backend for a layer: backend_per_kind[kind] when set, else `global` ("auto" and
// empty mean none). Throws InvalidArgument "Unknown KV cache group kind '<k>' in
// backend_per_kind. Valid kinds are: ..." for a key that is not a kind.
std::optional<std::string> vllm_backend_for_layer(const LayerSpec& spec, const VllmConfig& config,
                                                  const std::optional<std::string>& global);

// The catalog for a configuration. The returned object owns its rules; keep it alive while a
// Selector refers to it. vllm_catalog() (stacks.hpp) is make_vllm_catalog({}).
Catalog make_vllm_catalog(const VllmConfig& config);

// ---- FlashAttention version policy (§5.1) ----
struct FaVersionQuery {
  int head_size = 0;    // 0: unknown (backend-level checks call with fewer arguments)
  int head_size_v = 0;  // 0: equal to head_size
  bool alibi = false;
  bool sinks = false;
};
struct FaVersion {
  std::optional<int> version;      // nullopt on ROCm (no version argument is passed)
  std::vector<Warning> warnings;   // each downgrade, with a stable cause
  std::vector<std::string> notes;  // info-level upgrades ("upgrading FlashAttention 3 -> 4")
};
// `requested` replaces config.flash_attn_version when set (SelectOptions::variant). Throws
// Unsupported when the version that results is not built or cannot run on the device.
FaVersion vllm_flash_attn_version(const DeviceInfo& device, const VllmConfig& config,
                                  const FaVersionQuery& query,
                                  std::optional<int> requested = std::nullopt);
// "2", "3", "4", "FA3", "fa4", "v2" -> the number; throws InvalidArgument otherwise.
int parse_flash_attn_version(std::string_view s);
// flash_attn_supports_kv_cache_dtype (§5.3): FP8 KV only with FA3 on SM90 or FA4 on SM100.
bool vllm_flash_attn_supports_fp8(const DeviceInfo& device, const VllmConfig& config,
                                  int head_size);

// ---- FlashInfer (§3.1, §7.5) ----
// The trtllm-gen path: SM100 family, use_trtllm_attention not False, Q heads divisible by KV heads.
bool vllm_flashinfer_trtllm_usable(const LayerSpec& spec, const DeviceInfo& device,
                                   const VllmConfig& config);
// How the FlashInfer kernel sees the cache storage: "float8_e4m3fn", "float8_e5m2", "nvfp4
// (...)", or the model dtype. Never a bare uint8, which FlashInfer would read as NVFP4.
std::string vllm_flashinfer_kernel_view(const LayerSpec& spec);

// ---- KV spec consequences (§7.1, §7.3) ----
// The kernel block sizes a backend lists for this layer on this device (FlashInfer adds
// 128..1024 on SM100 with GQA > 1 when trtllm-gen is usable).
std::vector<BlockSizeEntry> vllm_kernel_block_sizes(std::string_view backend, const LayerSpec& spec,
                                                    const DeviceInfo& device,
                                                    const VllmConfig& config);
// get_preferred_block_size(default): the default if listed, else the smallest base; XPU's
// FLASH_ATTN and ROCM_AITER_UNIFIED_ATTN prefer 64; CUTLASS_MLA and FLASHMLA pin their size.
int vllm_preferred_block_size(std::string_view backend, const LayerSpec& spec,
                              const DeviceInfo& device, const VllmConfig& config,
                              int default_block_size = 16);
// prepare_kernel_block_sizes (§7.1 step 6) for one attention group: the manager block if every
// backend accepts it exactly (an exact int or a multiple of a MultipleOf), else the largest int
// entry that divides it and every backend accepts; else Unsupported "No common block size for N".
int vllm_kernel_block_size(int manager_block_size,
                           const std::vector<std::vector<BlockSizeEntry>>& backends);

// _align_hybrid_block_size (§7.3) for attention + mamba models.
struct HybridAlignment {
  int block_size = 0;                   // attention block size after alignment
  int64_t mamba_page_bytes = 0;         // mamba page padded to block_size * attn_page_per_token
  std::optional<int> mamba_block_size;  // set in mamba cache mode "all"
  bool raised = false;                  // block_size was raised over the current one
  std::vector<std::string> logs;        // vLLM's info lines
};
HybridAlignment vllm_align_hybrid_block_size(int64_t attn_page_bytes_per_token,
                                             int64_t mamba_page_bytes, int smallest_kernel_base,
                                             int current_block_size, bool mla,
                                             bool mamba_cache_mode_all = false,
                                             int mamba_chunk_size = 0);

// Logical KV page bytes of one block of one layer for this backend (§3.3, §7.2).
int64_t vllm_page_bytes(std::string_view backend, const LayerSpec& spec, int block_size);

// ---- MLA prefill selector (§6) ----
// A second small catalog (FLASH_ATTN, TRTLLM_RAGGED, FLASHINFER, TOKENSPEED_MLA, ROCM_AITER_FA,
// CPU_NATIVE) run through the same Selector.
Catalog make_vllm_mla_prefill_catalog(const VllmConfig& config);
const Catalog& vllm_mla_prefill_catalog();
struct MlaPrefillChoice {
  std::string backend;            // "" when the layer skips prefill selection (sparse MLA)
  std::optional<int> fa_version;  // FLASH_ATTN prefill: the FA version for (qk_nope+rope, v)
  bool v_zero_padded = false;     // V padded to the QK size (unless FA3 on SM9x or FA4)
  std::vector<Rejection> rejected;
  std::vector<Warning> warnings;
};
// Throws InvalidArgument "Unknown MLA prefill backend: ..." for an unknown explicit name, and
// Unsupported "Selected MLA prefill backend X is not valid ..." / "No valid MLA prefill backend
// found with MLAPrefillSelectorConfig(...)" otherwise.
MlaPrefillChoice select_vllm_mla_prefill(const LayerSpec& spec, const DeviceInfo& device,
                                         const VllmConfig& config = {});

}  // namespace attnkit
