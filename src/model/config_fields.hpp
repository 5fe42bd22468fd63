// Typed, error-reporting access to one JSON object of a Hugging Face config.json.
// Every error names the file and the field ("text_config.head_dim" for nested objects).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace attnkit::model_detail {

using nlohmann::json;

class ConfigFields {
 public:
  // `defaults` (may be null) holds the architecture's defaults: a key absent from `obj` is read
  // from it, as transformers' config classes do. A key present with null stays null (None).
  ConfigFields(const json& obj, std::string source, std::string prefix,
               const json* defaults = nullptr);
  // Holds a reference: a temporary object would dangle.
  ConfigFields(json&&, std::string, std::string, const json* = nullptr) = delete;

  const std::string& source() const { return source_; }
  // The field's printable name, with the nested prefix ("text_config.head_dim").
  std::string name(std::string_view key) const { return prefix_ + std::string(key); }

  // The value, or nullptr when absent (and not defaulted) or null.
  const json* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // The first of `keys` that has a value, or nullptr (`found` receives its key).
  const json* find_any(std::initializer_list<std::string_view> keys,
                       std::string_view* found = nullptr) const;

  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_number(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;

  // A positive integer under the first present key of `keys`; missing: names the first key and
  // says what it is needed for. Values above `most` are refused as a corrupt config's (counts
  // that something is built per unit of, such as layers).
  int require_positive(std::initializer_list<std::string_view> keys, std::string_view why,
                       int most = std::numeric_limits<int>::max()) const;
  int require_positive(std::string_view key, std::string_view why,
                       int most = std::numeric_limits<int>::max()) const {
    return require_positive({key}, why, most);
  }
  std::optional<int> get_positive(std::string_view key,
                                  int most = std::numeric_limits<int>::max()) const;
  std::string require_string(std::string_view key, std::string_view why) const;

  [[noreturn]] void fail(std::string_view message) const;
  [[noreturn]] void fail_missing(std::string_view key, std::string_view why) const;
  [[noreturn]] void fail_type(std::string_view key, const json& value,
                              std::string_view expected) const;

 private:
  int to_positive(std::string_view key, const json& v, int most) const;

  const json& obj_;
  std::string source_;
  std::string prefix_;
  const json* defaults_;
};

// A short printable form of a JSON value for error messages.
std::string describe(const json& value);

}  // namespace attnkit::model_detail
