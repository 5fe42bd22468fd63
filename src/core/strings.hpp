// Small string helpers shared inside the library.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace attnkit {

inline std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && to_lower(a) == to_lower(b);
}

// "a,b,,c" -> {"a", "b", "", "c"}: the pieces between separators, as they stand (empty ones
// too; one piece for a text without a separator).
inline std::vector<std::string_view> split(std::string_view text, char sep = ',') {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    const size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end == std::string_view::npos ? text.npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// `s` without leading and trailing white space.
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

inline std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ") {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

}  // namespace attnkit
