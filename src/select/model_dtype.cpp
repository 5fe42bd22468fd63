// The dtype a model runs in on a device: vLLM's `dtype auto` rule (_resolve_auto_dtype) over the
// dtypes a stack runs on the device.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "attnkit/error.hpp"
#include "attnkit/selector.hpp"
#include "core/strings.hpp"

namespace attnkit {
namespace {

// vLLM's _FLOAT16_NOT_SUPPORTED_MODELS ("numerical instability").
bool unstable_in_float16(std::string_view model_type) {
  static constexpr std::array<std::string_view, 5> kTypes = {"gemma2", "gemma3", "gemma3_text",
                                                             "plamo2", "glm4"};
  return std::find(kTypes.begin(), kTypes.end(), model_type) != kTypes.end();
}

// bfloat16, float16, float32 (vLLM's order of preference), those a backend declares and runs on
// the device.
std::vector<DType> declared_dtypes(const Catalog& catalog, const DeviceInfo& device) {
  std::vector<DType> out;
  for (DType d : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
    for (const BackendDecl& b : catalog.backends) {
      if (device_reasons(b.caps, device).empty() &&
          std::find(b.caps.dtypes.begin(), b.caps.dtypes.end(), d) != b.caps.dtypes.end()) {
        out.push_back(d);
        break;
      }
    }
  }
  return out;
}

}  // namespace

ModelDtype resolve_model_dtype(const Catalog& catalog, const DeviceInfo& device,
                               const ModelDtypeQuery& q) {
  const bool unstable = unstable_in_float16(q.model_type);
  if (q.requested) {
    if (*q.requested != DType::kFloat16 || !unstable) return {*q.requested, ""};
    const std::string why = fmt::format(
        "model type '{}' is numerically unstable in float16 (vLLM refuses it): use bfloat16 or "
        "float32",
        q.model_type);
    if (catalog.refuses_unstable_float16)
      throw Unsupported(fmt::format("--dtype float16 with --stack {}: {}", catalog.name, why));
    return {DType::kFloat16, "--dtype float16: " + why};
  }

  std::vector<DType> supported =
      catalog.platform_dtypes ? catalog.platform_dtypes(device) : declared_dtypes(catalog, device);
  if (unstable) std::erase(supported, DType::kFloat16);
  const DType written = q.config_dtype.value_or(DType::kBFloat16);
  std::string note = q.config_dtype ? ""
                                    : "the config names no dtype (dtype, torch_dtype): taken as "
                                      "bfloat16 (vLLM reads the weights' dtype there)";
  auto with = [&](std::string more) { return note.empty() ? more : note + "; " + more; };
  if (supported.empty()) return {written, note};
  const bool pool16 = q.pooling && std::find(supported.begin(), supported.end(), DType::kFloat16) !=
                                       supported.end();
  const DType preferred = pool16 ? DType::kFloat16 : supported.front();
  const std::string_view platform = to_string(device.platform);
  if (written == DType::kFloat32 && preferred != DType::kFloat32)
    return {preferred,
            with(fmt::format("dtype auto runs the float32 checkpoint in {} on {}: vLLM's rule "
                             "downcasts float32 to the platform's first dtype{}; --dtype float32 "
                             "keeps float32",
                             to_string(preferred), platform,
                             pool16 ? ", or float16 for a pooling model" : ""))};
  if (std::find(supported.begin(), supported.end(), written) != supported.end())
    return {written, note};
  std::vector<std::string> names;
  for (DType d : supported) names.emplace_back(to_string(d));
  return {preferred,
          with(fmt::format("{} does not run {} through the {} stack (it runs {}): dtype auto "
                           "falls back to {}",
                           device.name, to_string(written), catalog.name, join(names),
                           to_string(preferred)))};
}

}  // namespace attnkit
