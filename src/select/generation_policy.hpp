// Kernel-generation policy of a backend with several kernel generations (CUDA_FLASH v2/v3/v4).
// Generic over the generation list so tests can simulate every rule with fake lists and devices.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/capability.hpp"
#include "attnkit/selector.hpp"

namespace attnkit {

// Index into `gens` of the generation named by `requested`: "v3", "V3" or "3" all name "v3".
// Throws InvalidArgument listing the accepted names when none matches.
size_t parse_generation(const std::vector<KernelGeneration>& gens, std::string_view backend,
                        std::string_view requested);

// The generation a device prefers: the newest (last) one whose compute-capability range includes
// the device (SM90 -> v3, SM100..103 -> v4, others -> v2 for CUDA_FLASH). Built or not: the
// downgrade rules handle that. Non-CUDA devices get the first generation.
size_t default_generation(const std::vector<KernelGeneration>& gens, const DeviceInfo& device);

// Resolves the generation for a layer. `gens` is ordered oldest first; "down" means towards the
// front. Starting from the requested generation (or the device default), these ordered rules
// move down, each with a Warning that says why:
//   1. compute capability: the device is outside the generation's range;
//   2. not built: the generation is declared but this release does not build it;
//   3. layer: the generation's capabilities reject the layer (their reasons are quoted).
// The first rule that fires names the cause; the target is the newest older generation that no
// rule rejects. Throws Unsupported (every generation with its reasons) when none remains.
VariantChoice resolve_generation(const std::vector<KernelGeneration>& gens,
                                 std::string_view backend, const LayerSpec& spec,
                                 const DeviceInfo& device,
                                 const std::optional<std::string>& requested);

}  // namespace attnkit
