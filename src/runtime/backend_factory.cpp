#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "attnkit/runtime.hpp"
#include "backends/cpu_flash/cpu_flash_backend.hpp"
#include "backends/cpu_reference/cpu_reference_backend.hpp"
#include "backends/cuda_flash/cuda_flash_backend.hpp"
#include "backends/cuda_mla/cuda_mla_backend.hpp"
#include "core/strings.hpp"
#include "stacks/stacks.hpp"

namespace attnkit {

std::unique_ptr<AttentionBackend> make_backend(std::string_view name, const LayerSpec& spec,
                                               const DeviceInfo& device, std::string_view variant) {
  const BackendDecl* decl = native_catalog().find(name);
  if (!decl)
    throw InvalidArgument(
        fmt::format("backend '{}' is not an executable attnkit backend; "
                    "expected one of: {}",
                    name, join(native_catalog().names())));
  // Construction re-checks the declaration the selector used: a layer that passed selection
  // cannot fail here for a reason the declaration does not state.
  if (auto reasons = invalid_reasons(decl->caps, spec, device); !reasons.empty())
    throw Unsupported(fmt::format("backend {} cannot run layer {}: [{}]", decl->name(),
                                  spec.signature(), join(reasons)),
                      {{decl->name(), reasons}});
  if (iequals(name, "CPU_REFERENCE")) return make_cpu_reference_backend();
  if (iequals(name, "CPU_FLASH")) return make_cpu_flash_backend();
  if (iequals(name, "CUDA_FLASH")) {
    // The generation the selector resolved (generation_policy.hpp); "" lets the device decide.
    CudaFlashOptions opt;
    opt.generation = cuda_flash_generation(variant);
    return make_cuda_flash_backend(opt);
  }
  if (iequals(name, "CUDA_MLA")) return make_cuda_mla_backend();
  throw Unsupported(fmt::format("backend {} is declared for planning but its kernels are not in "
                                "this release; use plan/explain for it, or pick another backend",
                                decl->name()),
                    {{decl->name(), {"kernels not built in this release"}}});
}

}  // namespace attnkit
