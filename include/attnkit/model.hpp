// Hugging Face config.json -> ModelSpec (one LayerSpec per attention layer, one StateLayerSpec
// per mamba / linear-attention layer).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/types.hpp"

namespace attnkit {

// vLLM's kv_cache_dtype_skip_layers: attention layers that keep the model dtype's cache (auto)
// whatever kv_cache_dtype says, by index and, with `sliding_window`, every sliding-window layer
// (small windows lose the most to fp8). The cache becomes mixed-precision: the KV plan turns
// zeroing of fresh blocks on.
struct KvSkipLayers {
  std::vector<int> layers;
  bool sliding_window = false;
  bool empty() const { return layers.empty() && !sliding_window; }
};
// Parses "0,5,sliding_window" (comma-separated layer indices and the word sliding_window);
// InvalidArgument names a token that is neither.
KvSkipLayers parse_kv_skip_layers(std::string_view text);

struct ModelLoadOptions {
  std::optional<DType> dtype;  // --dtype (unset: auto); overrides the config's without a rule
  // The stack's dtype rule on the target device (resolve_model_dtype): given the config's dtype
  // and `dtype`, the one the model runs in. Unset: `dtype`, else the config's, else bfloat16.
  std::function<ModelDtype(const ModelDtypeQuery&)> dtype_rule;
  // --runner: auto decides as vLLM's default runner does (ModelSpec::runner_reason says how).
  Runner runner = Runner::kAuto;
  // Applied to every attention layer; unset: the checkpoint's KV scheme (quantization_config),
  // else auto.
  std::optional<KvCacheDType> kv_cache_dtype;
  std::optional<int> block_size;            // pinned block size, applied to every layer
  KvSkipLayers kv_cache_dtype_skip_layers;  // layers kept at auto (the rest quantized)
};

// `name_or_path` is a path to a config.json, or the short name of a bundled model
// (models/<name>.json, searched in $ATTNKIT_MODELS_DIR, then the source tree's models/).
// Throws InvalidArgument naming the field and the file for malformed or unknown configs.
ModelSpec load_model(std::string_view name_or_path, const ModelLoadOptions& options = {});
// Parses config JSON text; `source` names the file in error messages.
ModelSpec parse_model_config(std::string_view json_text, std::string_view source,
                             const ModelLoadOptions& options = {});
std::vector<std::string> bundled_model_names();
std::string models_dir();

}  // namespace attnkit
