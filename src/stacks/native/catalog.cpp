// The native stack: the backends attnkit itself executes, and their per-platform priorities.
#include <fmt/format.h>

#include "backends/cpu_flash/capabilities.hpp"
#include "backends/cpu_reference/capabilities.hpp"
#include "backends/cuda_flash/capabilities.hpp"
#include "backends/cuda_mla/capabilities.hpp"
#include "core/strings.hpp"
#include "select/generation_policy.hpp"
#include "stacks/stacks.hpp"

namespace attnkit {
namespace {

// MLA prefill runs over the decompressed K/V (qk = nope + rope, v = v_head_dim), not the latent
// cache: on CUDA the flash kernels take it (192/128 is a declared asymmetric pair).
LayerSpec mla_prefill_spec(const LayerSpec& spec) {
  LayerSpec p = spec;
  p.mla.reset();
  p.head_size = spec.mla->prefill_qk_head_size();
  p.head_size_v = spec.mla->v_head_dim;
  p.num_kv_heads = spec.num_heads;
  return p;
}

std::vector<std::pair<std::string, std::string>> native_plan_details(const LayerSpec& spec,
                                                                     const DeviceInfo& device,
                                                                     const SelectOptions& options,
                                                                     const Selection& sel) {
  std::vector<std::pair<std::string, std::string>> out;
  if (spec.is_mla()) {
    const LayerSpec p = mla_prefill_spec(spec);
    const std::string dims = fmt::format("qk {} / v {}", p.head_size, p.head_size_v);
    std::vector<std::string> valid;
    // An explicit choice runs every layer, prefill included; otherwise the platform's list.
    const std::vector<std::string> candidates =
        sel.explicit_choice                 ? std::vector<std::string>{sel.backend}
        : device.platform == Platform::kCpu ? std::vector<std::string>{"CPU_FLASH", "CPU_REFERENCE"}
                                            : std::vector<std::string>{"CUDA_FLASH"};
    for (const auto& name : candidates) {
      const BackendDecl* d = native_catalog().find(name);
      auto reasons = invalid_reasons(d->caps, p, device);
      if (reasons.empty()) {
        std::string v;
        std::vector<std::string> why;  // a requested generation it cannot run, and why
        if (d->resolve_variant) {
          SelectOptions o;
          o.variant = options.variant;
          const VariantChoice c = d->resolve_variant(p, device, o);
          v = " " + c.variant;
          for (const Warning& w : c.warnings) why.push_back(w.message);
        }
        out.emplace_back("MLA prefill", fmt::format("{}{} ({}){}", d->name(), v, dims,
                                                    why.empty() ? "" : "; " + join(why, "; ")));
        return out;
      }
      valid.push_back(fmt::format("{}: [{}]", name, fmt::join(reasons, ", ")));
    }
    out.emplace_back("MLA prefill",
                     fmt::format("no native backend ({}): {}", dims, fmt::join(valid, "; ")));
  }
  return out;
}

Catalog make_native_catalog() {
  Catalog c;
  c.name = "native";
  c.backends.push_back({cpu_reference_capabilities(), nullptr,
                        "fp64-accumulating oracle: any head size, every feature; slowest"});
  c.backends.push_back(
      {cpu_flash_capabilities(), nullptr, "tiled online-softmax CPU attention with SIMD"});
  c.backends.push_back(
      {cuda_flash_capabilities(),
       [](const LayerSpec& spec, const DeviceInfo& device, const SelectOptions& options) {
         return resolve_generation(cuda_flash_generations(), "CUDA_FLASH", spec, device,
                                   options.variant);
       },
       "paged flash attention on NVIDIA GPUs (v2 portable; v3 Hopper: wgmma prefill at heads "
       "64-256 and 192/128 over 16-bit and fp8 caches, v2 elsewhere; v4 Blackwell declared, not "
       "built; PrefixLM at heads 128 and 256)",
       cuda_flash_generations()});
  c.backends.push_back({cuda_mla_capabilities(), nullptr,
                        "MLA decode over the latent cache (576 = 512 latent + 64 rope, V read "
                        "from the K rows): wgmma on SM90, the flash kernels' wide form elsewhere"});
  // Reference lowest on CPU; ROCm and XPU have no native backend (the selector says so, with
  // every backend's "platform ... not supported").
  c.priorities = [](const LayerSpec& spec, const DeviceInfo& device) -> std::vector<std::string> {
    switch (device.platform) {
      case Platform::kCuda:
        if (spec.is_mla()) return {"CUDA_MLA"};
        return {"CUDA_FLASH"};
      case Platform::kCpu:
        return {"CPU_FLASH", "CPU_REFERENCE"};
      case Platform::kRocm:
      case Platform::kXpu:
        return {};
    }
    return {};
  };
  c.plan_details = native_plan_details;
  // CUDA_FLASH's generations are the stack's only variants.
  c.check_variant = [](std::string_view v) {
    parse_generation(cuda_flash_generations(), "CUDA_FLASH", v);
  };
  return c;
}

}  // namespace

const Catalog& native_catalog() {
  static const Catalog catalog = make_native_catalog();
  return catalog;
}

}  // namespace attnkit
