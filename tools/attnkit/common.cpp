#include "common.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace attnkit::cli {
namespace {

std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    out += v[i];
  }
  return out;
}

}  // namespace

std::string compact_indices(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  if (v.empty()) return "none";
  if (v.size() == 1) return std::to_string(v[0]);
  // One arithmetic progression of 3+ elements: "first-last" or "first-last step s".
  const int step = v[1] - v[0];
  bool progression = v.size() >= 3;
  for (size_t i = 2; progression && i < v.size(); ++i) progression = v[i] - v[i - 1] == step;
  if (progression)
    return step == 1 ? fmt::format("{}-{}", v.front(), v.back())
                     : fmt::format("{}-{} step {}", v.front(), v.back(), step);
  // Otherwise runs of consecutive indices.
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (j == i)
      parts.push_back(std::to_string(v[i]));
    else if (j == i + 1) {
      parts.push_back(std::to_string(v[i]));
      parts.push_back(std::to_string(v[j]));
    } else {
      parts.push_back(fmt::format("{}-{}", v[i], v[j]));
    }
    i = j + 1;
  }
  return join(parts);
}

std::string join_names(const std::vector<Platform>& v) {
  if (v.empty()) return "any";
  std::vector<std::string> s;
  for (auto x : v) s.emplace_back(to_string(x));
  return join(s);
}

std::string join_names(const std::vector<DType>& v) {
  std::vector<std::string> s;
  for (auto x : v) s.emplace_back(to_string(x));
  return s.empty() ? "none" : join(s);
}

std::string join_names(const std::vector<KvCacheDType>& v, bool empty_means_any) {
  if (v.empty()) return empty_means_any ? "any" : "none";
  std::vector<std::string> s;
  for (auto x : v) s.emplace_back(to_string(x));
  return join(s);
}

std::string join_names(const std::vector<AttentionType>& v) {
  std::vector<std::string> s;
  for (auto x : v) s.emplace_back(to_string(x));
  return s.empty() ? "none" : join(s);
}

std::string metadata_forms_text(const Capabilities& c) {
  std::vector<std::string> s;
  for (auto f : {MetadataForm::kSeqUsedK, MetadataForm::kBlockTable, MetadataForm::kCuSeqlensK})
    if (c.supports_metadata(f)) s.emplace_back(to_string(f));
  return s.empty() ? "none" : join(s);
}

std::string head_sizes_text(const Capabilities& c) {
  std::string s = c.head_sizes.describe();
  if (c.any_head_size_v) return s;
  std::vector<std::string> pairs;
  for (auto [qk, v] : c.asymmetric_head_sizes) pairs.push_back(fmt::format("{}/{}", qk, v));
  if (!pairs.empty()) s += "; qk/v " + join(pairs);
  return s;
}

std::string mla_text(const Capabilities& c) {
  std::string s = c.mla == MlaSupport::kStandardOnly ? "no"
                  : c.mla == MlaSupport::kMlaOnly    ? "only"
                                                     : "yes";
  if (c.sparse) s += " (sparse)";
  return s;
}

std::string generations_text(const std::vector<KernelGeneration>& gens) {
  if (gens.empty()) return "-";
  std::vector<std::string> s;
  for (const auto& g : gens)
    s.push_back(fmt::format("{} ({}{})", g.name, compute_capability_range(g.caps),
                            g.built ? "" : ", not built"));
  return join(s);
}

std::string format_columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string format_markdown_table(const std::vector<std::string>& header,
                                  const std::vector<std::vector<std::string>>& rows) {
  auto cell = [](std::string s) {
    std::string out;
    for (char c : s) {
      if (c == '|') out += '\\';
      out += c;
    }
    return out;
  };
  auto line = [&](const std::vector<std::string>& r) {
    std::string out = "|";
    for (const auto& c : r) out += " " + cell(c) + " |";
    return out + "\n";
  };
  std::string out = line(header);
  out += "|";
  for (size_t i = 0; i < header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

}  // namespace attnkit::cli
