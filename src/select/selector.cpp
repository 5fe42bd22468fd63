#include "attnkit/selector.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "attnkit/error.hpp"
#include "attnkit/log.hpp"
#include "core/strings.hpp"

namespace attnkit {

const BackendDecl* Catalog::find(std::string_view n) const {
  for (const auto& b : backends)
    if (iequals(b.name(), n)) return &b;
  return nullptr;
}

std::vector<std::string> Catalog::names() const {
  std::vector<std::string> out;
  for (const auto& b : backends) out.push_back(b.name());
  return out;
}

std::optional<std::string> resolve_requested_backend(const std::optional<std::string>& flag) {
  std::optional<std::string> chosen = flag;
  if (!chosen) {
    if (const char* env = std::getenv("ATTNKIT_ATTENTION_BACKEND")) chosen = std::string(env);
  }
  if (!chosen || chosen->empty() || iequals(*chosen, "auto")) return std::nullopt;
  return chosen;
}

Selector::Selector(const Catalog& catalog, DeviceInfo device, SelectOptions options)
    : catalog_(catalog), device_(std::move(device)), options_(std::move(options)) {
  // Callers may pass the raw flag: "auto" and "" mean automatic here too.
  if (options_.backend && (options_.backend->empty() || iequals(*options_.backend, "auto")))
    options_.backend.reset();
  if (options_.backend && !catalog_.find(*options_.backend))
    throw InvalidArgument(fmt::format(
        "attention backend '{}' is unknown to the {} stack; expected auto or one of: {}",
        *options_.backend, catalog_.name, join(catalog_.names())));
  if (options_.variant && !options_.variant->empty() && catalog_.check_variant)
    catalog_.check_variant(*options_.variant);
}

std::vector<Rejection> Selector::evaluate_all(const LayerSpec& spec) const {
  std::vector<Rejection> out;
  for (const auto& b : catalog_.backends)
    out.push_back({b.name(), invalid_reasons(b.caps, spec, device_)});
  return out;
}

namespace {

std::string format_reasons(const Catalog& c, const std::vector<Rejection>& rs) {
  std::vector<std::string> parts;
  for (const auto& r : rs) {
    const BackendDecl* b = c.find(r.backend);
    parts.push_back(fmt::format("{}: [{}]", r.backend,
                                b ? join(detailed_reasons(b->caps, r.reasons)) : join(r.reasons)));
  }
  return "{" + join(parts) + "}";
}

std::map<std::string, std::vector<std::string>> as_map(const std::vector<Rejection>& rs) {
  std::map<std::string, std::vector<std::string>> m;
  for (const auto& r : rs) m[r.backend] = r.reasons;
  return m;
}

}  // namespace

Selection Selector::select_uncached(const LayerSpec& spec) const {
  Selection sel;
  sel.candidates = catalog_.priorities ? catalog_.priorities(spec, device_) : catalog_.names();
  const std::string where = fmt::format("{} ({})", to_string(device_.platform), device_.name);

  const BackendDecl* picked = nullptr;
  if (options_.backend) {
    picked = catalog_.find(*options_.backend);
    sel.explicit_choice = true;
    if (catalog_.redirect_explicit) {
      if (auto r = catalog_.redirect_explicit(picked->name(), spec, device_)) {
        const BackendDecl* to = catalog_.find(r->backend);
        if (!to)
          throw Error(
              fmt::format("{} stack: explicit-choice rule names backend '{}' that the "
                          "catalog does not declare",
                          catalog_.name, r->backend));
        picked = to;
        if (r->warning) sel.warnings.push_back(*r->warning);
      }
    }
    auto reasons = invalid_reasons(picked->caps, spec, device_);
    if (!reasons.empty()) {
      // The backends that would work, in this platform's priority order first.
      std::vector<std::string> would_work;
      const auto all = evaluate_all(spec);
      auto valid = [&](std::string_view n) {
        for (const auto& r : all)
          if (iequals(r.backend, n)) return r.reasons.empty();
        return false;
      };
      for (const auto& n : sel.candidates)
        if (valid(n)) would_work.push_back(catalog_.find(n)->name());
      for (const auto& r : all)
        if (r.reasons.empty() &&
            std::find(would_work.begin(), would_work.end(), r.backend) == would_work.end())
          would_work.push_back(r.backend);
      throw Unsupported(
          fmt::format("Selected backend {} is not valid for this configuration on {} (layer {}). "
                      "Reason: [{}]. Backends that would work for this layer: [{}]",
                      picked->name(), where, spec.signature(),
                      join(detailed_reasons(picked->caps, reasons)),
                      would_work.empty() ? "none" : join(would_work)),
          {{picked->name(), reasons}});
    }
  } else {
    for (const auto& name : sel.candidates) {
      const BackendDecl* b = catalog_.find(name);
      // A priority list naming an undeclared backend is a catalog bug; skipping it would be a
      // silent fallback.
      if (!b)
        throw Error(
            fmt::format("{} stack: priority list for {} names backend '{}' that the "
                        "catalog does not declare (declared: {})",
                        catalog_.name, where, name, join(catalog_.names())));
      auto reasons = invalid_reasons(b->caps, spec, device_);
      if (reasons.empty()) {
        picked = b;
        break;
      }
      sel.rejected.push_back({b->name(), std::move(reasons)});
    }
    if (!picked) {
      auto all = evaluate_all(spec);
      // A backend that is valid but absent from this platform's priority list is never picked
      // automatically; say so instead of printing it with no reason.
      for (auto& r : all)
        if (r.reasons.empty())
          r.reasons.push_back(fmt::format("not in the {} priority list (choose it explicitly)",
                                          to_string(device_.platform)));
      const std::string walked = sel.candidates.empty()
                                     ? fmt::format("the {} stack has no backend for platform {}",
                                                   catalog_.name, to_string(device_.platform))
                                     : fmt::format("tried [{}]", join(sel.candidates));
      // A dtype no backend of the priority list declares (configs often say float32, which no
      // GPU kernel runs): name the dtypes that would run.
      std::vector<std::string> runs;
      for (const auto& name : sel.candidates)
        for (DType d : catalog_.find(name)->caps.dtypes)
          if (std::find(runs.begin(), runs.end(), to_string(d)) == runs.end())
            runs.emplace_back(to_string(d));
      const std::string dtypes =
          runs.empty() || std::find(runs.begin(), runs.end(), to_string(spec.dtype)) != runs.end()
              ? ""
              : fmt::format(
                    " No backend of the {} priority list runs {}; they run {}: choose one "
                    "of those dtypes.",
                    to_string(device_.platform), to_string(spec.dtype), join(runs));
      throw Unsupported(
          fmt::format("No valid attention backend found for {} with layer {} ({}). "
                      "Reasons: {}.{}",
                      where, spec.signature(), walked, format_reasons(catalog_, all), dtypes),
          as_map(all));
    }
    if (spec.block_size) {
      std::vector<std::string> precluded;
      for (const auto& r : sel.rejected)
        if (r.reasons == std::vector<std::string>{"block_size not supported"})
          precluded.push_back(r.backend);
      if (!precluded.empty())
        sel.warnings.push_back(
            {fmt::format("block_size_precluded:{}:{}", *spec.block_size, join(precluded)),
             fmt::format("--block-size {} precluded higher-priority backend(s) {}. Using {} "
                         "instead, which may result in reduced performance. Consider removing "
                         "--block-size to auto-select.",
                         *spec.block_size, join(precluded), picked->name())});
    }
  }
  sel.backend = picked->name();
  if (picked->resolve_variant) {
    VariantChoice v = picked->resolve_variant(spec, device_, options_);
    sel.variant = v.variant;
    for (auto& w : v.warnings) sel.warnings.push_back(std::move(w));
  } else if (options_.variant) {
    sel.warnings.push_back({fmt::format("variant_ignored:{}:{}", picked->name(), *options_.variant),
                            fmt::format("variant '{}' ignored: backend {} has no kernel variants",
                                        *options_.variant, picked->name())});
  }
  return sel;
}

const Selection& Selector::select(const LayerSpec& spec) {
  const std::string key = spec.signature();
  const Selection* sel = nullptr;
  {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return *it->second;
    auto fresh = std::make_unique<Selection>(select_uncached(spec));
    sel = cache_.emplace(key, std::move(fresh)).first->second.get();
  }
  // Logged outside the lock: a sink may call back into the selector. Entries are never erased,
  // so `sel` stays valid.
  for (const auto& w : sel->warnings) warn_once(w.cause, w.message);
  if (sel->explicit_choice)
    log(LogLevel::kInfo, fmt::format("Using {} backend.", sel->backend));
  else
    log(LogLevel::kInfo, fmt::format("Using {} attention backend out of potential backends: [{}]",
                                     sel->backend, join(sel->candidates)));
  return *sel;
}

}  // namespace attnkit
