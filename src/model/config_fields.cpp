#include "model/config_fields.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "attnkit/error.hpp"

namespace attnkit::model_detail {

std::string describe(const json& value) {
  std::string text = value.dump();
  if (text.size() > 48) text = text.substr(0, 45) + "...";
  return fmt::format("{} ({})", text, value.type_name());
}

ConfigFields::ConfigFields(const json& obj, std::string source, std::string prefix,
                           const json* defaults)
    : obj_(obj), source_(std::move(source)), prefix_(std::move(prefix)), defaults_(defaults) {}

const json* ConfigFields::find(std::string_view key) const {
  const std::string k(key);
  auto it = obj_.find(k);
  if (it != obj_.end()) return it->is_null() ? nullptr : &*it;
  if (defaults_) {
    auto d = defaults_->find(k);
    if (d != defaults_->end() && !d->is_null()) return &*d;
  }
  return nullptr;
}

const json* ConfigFields::find_any(std::initializer_list<std::string_view> keys,
                                   std::string_view* found) const {
  for (std::string_view k : keys) {
    if (const json* v = find(k)) {
      if (found) *found = k;
      return v;
    }
  }
  return nullptr;
}

void ConfigFields::fail(std::string_view message) const {
  throw InvalidArgument(fmt::format("{}: {}", source_, message));
}

void ConfigFields::fail_missing(std::string_view key, std::string_view why) const {
  fail(fmt::format("field '{}' is missing (needed {})", name(key), why));
}

void ConfigFields::fail_type(std::string_view key, const json& value,
                             std::string_view expected) const {
  fail(fmt::format("field '{}' must be {}, got {}", name(key), expected, describe(value)));
}

std::optional<int64_t> ConfigFields::get_int(std::string_view key) const {
  const json* v = find(key);
  if (!v) return std::nullopt;
  if (v->is_number_integer()) return v->get<int64_t>();
  // Some configs write integers as 4096.0; accept integral floats only.
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return int64_t(d);
  }
  fail_type(key, *v, "an integer");
}

std::optional<double> ConfigFields::get_number(std::string_view key) const {
  const json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) fail_type(key, *v, "a number");
  return v->get<double>();
}

std::optional<bool> ConfigFields::get_bool(std::string_view key) const {
  const json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) fail_type(key, *v, "true or false");
  return v->get<bool>();
}

std::optional<std::string> ConfigFields::get_string(std::string_view key) const {
  const json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail_type(key, *v, "a string");
  return v->get<std::string>();
}

int ConfigFields::to_positive(std::string_view key, const json& v, int most) const {
  bool ok = false;
  int64_t n = 0;
  if (v.is_number_unsigned()) {
    // Saturated: past INT64_MAX (which get<int64_t> would wrap negative) it is only too large.
    const uint64_t u = v.get<uint64_t>();
    n = u > uint64_t(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                          : int64_t(u);
    ok = true;
  } else if (v.is_number_integer()) {
    n = v.get<int64_t>();
    ok = true;
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    ok = std::isfinite(d) && d == std::floor(d);
    if (ok)
      n = std::fabs(d) < 9.0e15 ? int64_t(d) : d > 0 ? std::numeric_limits<int64_t>::max() : -1;
  }
  if (!ok) fail_type(key, v, "a positive integer");
  // The value as the config wrote it (n is saturated for huge ones).
  const std::string given = v.dump();
  if (n <= 0) fail(fmt::format("field '{}' must be a positive integer, got {}", name(key), given));
  if (n > most && most == std::numeric_limits<int>::max())
    fail(fmt::format("field '{}' must be a positive integer at most {}, got {}", name(key), most,
                     given));
  if (n > most)
    fail(
        fmt::format("field '{}' is {}; expected at most {} (a value this large is taken for a "
                    "corrupt config)",
                    name(key), given, most));
  return int(n);
}

int ConfigFields::require_positive(std::initializer_list<std::string_view> keys,
                                   std::string_view why, int most) const {
  std::string_view found;
  const json* v = find_any(keys, &found);
  if (!v) {
    std::string also;
    for (auto it = keys.begin() + 1; it < keys.end(); ++it) {
      also += fmt::format("{}'{}'", also.empty() ? "" : ", ", name(*it));
    }
    if (also.empty()) fail_missing(*keys.begin(), why);
    fail(fmt::format("field '{}' is missing (needed {}; also looked for {})", name(*keys.begin()),
                     why, also));
  }
  return to_positive(found, *v, most);
}

std::optional<int> ConfigFields::get_positive(std::string_view key, int most) const {
  const json* v = find(key);
  if (!v) return std::nullopt;
  return to_positive(key, *v, most);
}

std::string ConfigFields::require_string(std::string_view key, std::string_view why) const {
  auto s = get_string(key);
  if (!s) fail_missing(key, why);
  return *s;
}

}  // namespace attnkit::model_detail
