// Pieces of the vLLM stack shared between its source files (not a public API).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stacks/vllm/vllm_stack.hpp"

namespace attnkit::vllm {

std::vector<BackendDecl> declare_backends(const VllmConfig& cfg);

// FLASH_ATTN's version-dependent reasons; `requested` is an explicit FA version (or nullopt).
void fa_rules(const LayerSpec& s, const DeviceInfo& d, const VllmConfig& cfg,
              std::optional<int> requested, std::vector<std::string>& reasons);
VariantChoice resolve_fa_variant(const LayerSpec& s, const DeviceInfo& d, const VllmConfig& cfg,
                                 const SelectOptions& o);

// Per-platform priority lists (§4.3-§4.5).
std::vector<std::string> priorities(const VllmConfig& cfg, const LayerSpec& s, const DeviceInfo& d);

// Facts vLLM attaches to a backend class beyond validation (§1.3, §3.3, §3.4).
std::optional<std::string> required_kv_layout(const std::string& backend, const DeviceInfo& d);
std::string cudagraph_support(const std::string& backend, const LayerSpec& s, const DeviceInfo& d,
                              const VllmConfig& cfg, const std::string& variant);

std::vector<std::pair<std::string, std::string>> plan_details(const VllmConfig& cfg,
                                                              const LayerSpec& s,
                                                              const DeviceInfo& d,
                                                              const SelectOptions& o,
                                                              const Selection& sel);

}  // namespace attnkit::vllm
