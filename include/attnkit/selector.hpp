// Backend catalogs and the one selection engine every stack (native, vllm) runs on.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/capability.hpp"
#include "attnkit/device.hpp"
#include "attnkit/types.hpp"

namespace attnkit {

// What the caller asked for beyond the layer itself.
struct SelectOptions {
  std::optional<std::string>
      backend;  // explicit choice (already resolved from flag/env; no "auto")
  std::optional<std::string> variant;  // requested kernel generation / version ("v3", "3", ...)
};

// The kernel variant a backend resolves for a valid layer (CUDA_FLASH generation, vLLM FA
// version), with the warnings of every downgrade rule that fired. Each warning carries a cause
// key so it is logged once per cause.
struct Warning {
  std::string cause;
  std::string message;
  bool operator==(const Warning&) const = default;
};
struct VariantChoice {
  std::string variant;
  std::vector<Warning> warnings;
};
using VariantResolver =
    std::function<VariantChoice(const LayerSpec&, const DeviceInfo&, const SelectOptions&)>;

struct Rejection {
  std::string backend;
  std::vector<std::string> reasons;
  bool operator==(const Rejection&) const = default;
};

struct Selection {
  std::string backend;
  std::string variant;                  // "" when the backend has no variants
  std::vector<std::string> candidates;  // the priority list that was walked
  std::vector<Rejection> rejected;      // candidates refused before the pick (auto), in order
  std::vector<Warning> warnings;        // variant downgrades and the pinned-block-size warning
  bool explicit_choice = false;
};

struct BackendDecl {
  Capabilities caps;
  VariantResolver resolve_variant;  // optional
  std::string description;          // one line for `attnkit backends`
  // Optional: the kernel generations behind resolve_variant, for the feature matrix (read
  // `built` from here rather than repeating it in the description).
  std::vector<KernelGeneration> generations = {};
  const std::string& name() const { return caps.name; }
};

struct ExplicitRedirect {
  std::string backend;             // a backend the catalog declares
  std::optional<Warning> warning;  // logged once, like variant warnings
};

struct Catalog {
  std::string name;  // "native", "vllm"
  std::vector<BackendDecl> backends;
  // Ordered candidates for this layer on this device (the platform's priority list).
  std::function<std::vector<std::string>(const LayerSpec&, const DeviceInfo&)> priorities;
  // Optional stack-specific facts for a layer's plan, as (label, value) lines: the vLLM stack
  // reports its MLA prefill backend and KV-spec consequences here.
  std::function<std::vector<std::pair<std::string, std::string>>(
      const LayerSpec&, const DeviceInfo&, const SelectOptions&, const Selection&)>
      plan_details;
  // Optional platform rule applied to an explicit choice before it is validated: the backend to
  // validate instead, with a warning (vLLM's CPU platform replaces any other request with its own
  // backend; XPU's first-match rules come before the request). nullopt keeps the request; the
  // hook may throw Unsupported to refuse it outright.
  std::function<std::optional<ExplicitRedirect>(std::string_view requested, const LayerSpec&,
                                                const DeviceInfo&)>
      redirect_explicit;
  // Optional: throws InvalidArgument when a requested variant names no variant of any backend
  // of the stack, so a typo is refused on every device, not only where a backend with variants
  // is picked (a known variant a picked backend lacks stays a warning). Unset: not checked.
  std::function<void(std::string_view variant)> check_variant;
  // The model dtypes the stack runs on a device, preferred first: what `dtype auto` picks from
  // (resolve_model_dtype). Unset: bfloat16, float16, float32, those its backends declare for the
  // device.
  std::function<std::vector<DType>(const DeviceInfo&)> platform_dtypes;
  // Whether float16 is refused for the model types that are unstable in it (vLLM's rule);
  // otherwise it is a warning.
  bool refuses_unstable_float16 = false;
  const BackendDecl* find(std::string_view name) const;  // case-insensitive; nullptr if unknown
  std::vector<std::string> names() const;
};

// Resolves the explicit backend: the flag wins over ATTNKIT_ATTENTION_BACKEND; "auto" (any case)
// and empty mean automatic. Does not validate the name (the selector does, against its catalog).
std::optional<std::string> resolve_requested_backend(const std::optional<std::string>& flag);

class Selector {
 public:
  // Throws InvalidArgument for an unknown backend name or variant (Catalog::check_variant).
  Selector(const Catalog& catalog, DeviceInfo device, SelectOptions options = {});

  // Selects once per distinct layer signature (cached) and logs, the first time,
  // "Using X attention backend out of potential backends: [A, B, ...]".
  // Throws InvalidArgument for an unknown backend name (listing the valid ones) and Unsupported
  // for an invalid explicit choice (its reasons and the backends that would work) or when no
  // backend is valid (every backend with its reasons).
  const Selection& select(const LayerSpec& spec);

  // Every backend of the catalog with its reasons for this layer (empty reasons = valid), in
  // catalog order: what `attnkit explain` prints.
  std::vector<Rejection> evaluate_all(const LayerSpec& spec) const;

  const Catalog& catalog() const { return catalog_; }
  const DeviceInfo& device() const { return device_; }
  const SelectOptions& options() const { return options_; }

 private:
  Selection select_uncached(const LayerSpec& spec) const;

  const Catalog& catalog_;
  DeviceInfo device_;
  SelectOptions options_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Selection>> cache_;
};

// The dtype a model runs in through `catalog` on `device`, vLLM's rule (_resolve_auto_dtype): a
// requested dtype is kept; auto keeps the config's dtype where the platform runs it, and turns
// float32 checkpoints into the platform's preferred dtype (float16 for pooling models where the
// platform runs it); a config dtype the platform does not run falls back to the preferred one.
// float16 is never picked for the model types unstable in it (gemma2, gemma3, gemma3_text,
// plamo2, glm4), and a request for it is refused (Unsupported) where the catalog says so. A
// config that names no dtype is taken as bfloat16 (vLLM reads the weights' dtype there). With
// no dtype on the platform at all, the config's is kept and selection says why nothing runs.
ModelDtype resolve_model_dtype(const Catalog& catalog, const DeviceInfo& device,
                               const ModelDtypeQuery& query);

// Catalogs known to the library, by stack name ("native", "vllm").
const Catalog& catalog_for_stack(std::string_view stack);
std::vector<std::string> stack_names();

}  // namespace attnkit
