#include "select/generation_policy.hpp"

#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "core/strings.hpp"

namespace attnkit {
namespace {

bool is_gpu(const DeviceInfo& d) { return d.platform == Platform::kCuda; }

bool cc_in_range(const Capabilities& c, const DeviceInfo& d) {
  if (!is_gpu(d)) return false;
  const int cc = d.cc.as_int();
  return (!c.min_compute_capability || cc >= *c.min_compute_capability) &&
         (!c.max_compute_capability || cc <= *c.max_compute_capability);
}

// The family a well-known generation targets, for readable warnings ("v3 (Hopper) kernels").
std::string label(const std::string& name) {
  if (name == "v2") return "v2 (portable)";
  if (name == "v3") return "v3 (Hopper)";
  if (name == "v4") return "v4 (Blackwell)";
  return name;
}

enum class Rule { kNone, kComputeCapability, kNotBuilt, kLayer };

struct Verdict {
  Rule rule = Rule::kNone;
  std::vector<std::string> reasons;  // rule kLayer: the capability reasons
};

Verdict judge(const KernelGeneration& g, const LayerSpec& spec, const DeviceInfo& device) {
  if (is_gpu(device) && !cc_in_range(g.caps, device)) return {Rule::kComputeCapability, {}};
  if (!g.built) return {Rule::kNotBuilt, {}};
  auto reasons = invalid_reasons(g.caps, spec, device);
  if (!reasons.empty()) return {Rule::kLayer, std::move(reasons)};
  return {};
}

std::string verdict_text(const KernelGeneration& g, const Verdict& v, const DeviceInfo& device) {
  switch (v.rule) {
    case Rule::kNone:
      return "valid";
    case Rule::kComputeCapability:
      return fmt::format("needs compute capability {}; device has {}",
                         compute_capability_range(g.caps),
                         compute_capability_text(device.cc.as_int()));
    case Rule::kNotBuilt:
      return "not built in this release";
    case Rule::kLayer:
      return join(v.reasons);
  }
  return "?";
}

}  // namespace

size_t parse_generation(const std::vector<KernelGeneration>& gens, std::string_view backend,
                        std::string_view requested) {
  const std::string r = to_lower(requested);
  for (size_t i = 0; i < gens.size(); ++i) {
    const std::string n = to_lower(gens[i].name);
    if (r == n || (n.size() > 1 && n[0] == 'v' && r == n.substr(1))) return i;
  }
  std::vector<std::string> names, bare;
  for (const auto& g : gens) {
    names.push_back(g.name);
    if (g.name.size() > 1 && (g.name[0] == 'v' || g.name[0] == 'V'))
      bare.push_back(g.name.substr(1));
  }
  throw InvalidArgument(
      fmt::format("variant '{}' is not a {} kernel generation; expected one of {}{}", requested,
                  backend, join(names), bare.empty() ? "" : fmt::format(" (or {})", join(bare))));
}

size_t default_generation(const std::vector<KernelGeneration>& gens, const DeviceInfo& device) {
  for (size_t i = gens.size(); i-- > 0;)
    if (cc_in_range(gens[i].caps, device)) return i;
  return 0;
}

VariantChoice resolve_generation(const std::vector<KernelGeneration>& gens,
                                 std::string_view backend, const LayerSpec& spec,
                                 const DeviceInfo& device,
                                 const std::optional<std::string>& requested) {
  if (gens.empty()) throw Unsupported(fmt::format("{} declares no kernel generation", backend));
  const bool was_requested = requested.has_value() && !requested->empty();
  const size_t start = was_requested ? parse_generation(gens, backend, *requested)
                                     : default_generation(gens, device);

  const Verdict first = judge(gens[start], spec, device);
  if (first.rule == Rule::kNone) return {gens[start].name, {}};

  // The newest older generation that no rule rejects.
  std::optional<size_t> target;
  for (size_t i = start; i-- > 0;) {
    if (judge(gens[i], spec, device).rule == Rule::kNone) {
      target = i;
      break;
    }
  }
  const KernelGeneration& from = gens[start];
  if (!target) {
    std::map<std::string, std::vector<std::string>> all;
    std::vector<std::string> parts;
    for (const auto& g : gens) {
      const Verdict v = judge(g, spec, device);
      all[g.name] =
          v.rule == Rule::kLayer ? v.reasons : std::vector<std::string>{verdict_text(g, v, device)};
      parts.push_back(fmt::format("{}: {}", g.name, verdict_text(g, v, device)));
    }
    throw Unsupported(fmt::format("no {} kernel generation can run layer {} on {}: {}", backend,
                                  spec.signature(), device.name, join(parts, "; ")),
                      std::move(all));
  }
  const std::string& to = gens[*target].name;
  const std::string who =
      was_requested
          ? fmt::format("{} {} kernels (requested)", backend, label(from.name))
          : fmt::format("{} {} kernels (preferred on this device)", backend, label(from.name));
  Warning w;
  switch (first.rule) {
    case Rule::kComputeCapability:
      w.cause =
          fmt::format("{}:generation:{}->{}:cc{}", backend, from.name, to, device.cc.as_int());
      w.message = fmt::format("{} need compute capability {}; device has {}: using {}", who,
                              compute_capability_range(from.caps),
                              compute_capability_text(device.cc.as_int()), to);
      break;
    case Rule::kNotBuilt:
      w.cause = fmt::format("{}:generation:{}->{}:not_built", backend, from.name, to);
      w.message = fmt::format(
          "{} are not built in this release: using {}, the best built generation", who, to);
      break;
    case Rule::kLayer:
      w.cause = fmt::format("{}:generation:{}->{}:layer:{}", backend, from.name, to,
                            join(first.reasons, ","));
      w.message =
          fmt::format("{} do not support this layer ({}): using {}", who, join(first.reasons), to);
      break;
    case Rule::kNone:
      break;
  }
  // The generations between the preferred one and the target were passed over too: say why.
  std::vector<std::string> passed;
  for (size_t i = start; i-- > *target + 1;)
    passed.push_back(fmt::format("{} ({})", label(gens[i].name),
                                 verdict_text(gens[i], judge(gens[i], spec, device), device)));
  if (!passed.empty()) w.message += fmt::format("; also passed over: {}", join(passed, "; "));
  return {to, {std::move(w)}};
}

}  // namespace attnkit
