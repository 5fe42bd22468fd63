// Kernel block-size negotiation across every backend of a KV group.
#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "core/strings.hpp"

namespace attnkit {

namespace {

bool accepts(const Capabilities& c, int kernel_block) {
  return std::any_of(c.kernel_block_sizes.begin(), c.kernel_block_sizes.end(),
                     [&](const BlockSizeEntry& e) { return e.accepts_kernel_block(kernel_block); });
}

// Distinct backends in first-seen order (a group usually repeats one backend per layer).
std::vector<const Capabilities*> distinct(const std::vector<const Capabilities*>& backends) {
  std::vector<const Capabilities*> out;
  for (const Capabilities* c : backends) {
    if (!c) continue;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Capabilities* o) {
      return o == c || (o->name == c->name && o->kernel_block_sizes == c->kernel_block_sizes);
    });
    if (!seen) out.push_back(c);
  }
  return out;
}

std::string accepted_sizes(const std::vector<const Capabilities*>& backends) {
  std::vector<std::string> parts;
  for (const Capabilities* c : backends)
    parts.push_back(fmt::format("{} accepts {}", c->name, to_string(c->kernel_block_sizes)));
  return join(parts, "; ");
}

std::map<std::string, std::vector<std::string>> reasons_of(
    const std::vector<const Capabilities*>& backends) {
  std::map<std::string, std::vector<std::string>> r;
  for (const Capabilities* c : backends)
    r[c->name].push_back("kernel block sizes " + to_string(c->kernel_block_sizes));
  return r;
}

}  // namespace

std::optional<int> largest_common_kernel_block(const std::vector<const Capabilities*>& backends,
                                               int manager_block, int kernel_divides) {
  if (manager_block <= 0) return std::nullopt;
  const auto ds = distinct(backends);
  for (int k = manager_block; k >= 1; --k) {
    if (manager_block % k || (kernel_divides > 0 && kernel_divides % k)) continue;
    if (std::all_of(ds.begin(), ds.end(), [&](const Capabilities* c) { return accepts(*c, k); }))
      return k;
  }
  return std::nullopt;
}

BlockSizeChoice negotiate_block_size(const std::vector<const Capabilities*>& backends,
                                     std::optional<int> pinned, int default_block_size,
                                     int kernel_divides) {
  if (default_block_size <= 0)
    throw InvalidArgument(
        fmt::format("default block size must be > 0, got {}", default_block_size));
  const auto ds = distinct(backends);
  const std::string divides_note =
      kernel_divides > 0 ? fmt::format(" (kernel blocks dividing {})", kernel_divides) : "";
  BlockSizeChoice c;
  if (pinned) {
    if (*pinned <= 0) throw InvalidArgument(fmt::format("block size must be > 0, got {}", *pinned));
    c.manager_block_size = *pinned;
    const auto k = largest_common_kernel_block(ds, *pinned, kernel_divides);
    if (!k)
      throw Unsupported(
          fmt::format("block size {} (pinned) cannot be split into a kernel block size{} that "
                      "every backend of the group accepts: {}",
                      *pinned, divides_note, accepted_sizes(ds)),
          reasons_of(ds));
    c.kernel_block_size = *k;
    c.reason = *k == *pinned
                   ? fmt::format("pinned by the user ({})", *pinned)
                   : fmt::format("pinned by the user ({}), split into {} kernel blocks of {}",
                                 *pinned, *pinned / *k, *k);
    c.reason += divides_note;
    return c;
  }
  if (ds.empty()) {
    c.manager_block_size = c.kernel_block_size = default_block_size;
    c.reason = fmt::format("default ({}), no kernel constraint", default_block_size);
    return c;
  }

  // Candidates, best first: each backend's preferred size, the default, then every declared
  // size (exact values and MultipleOf bases), then the lcm of the MultipleOf bases.
  // With kernel_divides, each preferred and default size is followed by its largest divisor of it.
  std::vector<std::pair<int, std::string>> candidates;
  auto add = [&](int size, const std::string& why) {
    candidates.emplace_back(size, why);
    if (kernel_divides > 0 && size > 0 && kernel_divides % size)
      candidates.emplace_back(std::gcd(size, kernel_divides),
                              fmt::format("{}, narrowed to divide {}", why, kernel_divides));
  };
  for (const Capabilities* cap : ds)
    add(cap->preferred_block(default_block_size), fmt::format("preferred by {}", cap->name));
  add(default_block_size, "default");
  for (const Capabilities* cap : ds)
    for (const BlockSizeEntry& e : cap->kernel_block_sizes)
      candidates.emplace_back(e.value, fmt::format("declared by {}", cap->name));
  int64_t l = 1;
  for (const Capabilities* cap : ds) {
    int base = 0;
    for (const BlockSizeEntry& e : cap->kernel_block_sizes)
      if (e.multiple && (!base || e.value < base)) base = e.value;
    if (base) l = std::lcm(l, int64_t(base));
  }
  if (l > 1 && l <= 1 << 16) candidates.emplace_back(int(l), "least common multiple of the bases");

  // First pass: a candidate every backend runs directly; second pass: one that splits.
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [size, why] : candidates) {
      if (size <= 0) continue;
      const auto k = largest_common_kernel_block(ds, size, kernel_divides);
      if (!k || (pass == 0 && *k != size)) continue;
      c.manager_block_size = size;
      c.kernel_block_size = *k;
      std::vector<std::string> names;
      for (const Capabilities* cap : ds) names.push_back(cap->name);
      c.reason = fmt::format("{} ({}), accepted by {}", why, size, join(names, ", "));
      if (*k != size) c.reason += fmt::format("; split into {} kernel blocks of {}", size / *k, *k);
      c.reason += divides_note;
      return c;
    }
  }
  throw Unsupported(fmt::format("no kernel block size{} is accepted by every backend of the group "
                                "(tried the preferred, default and declared sizes): {}",
                                divides_note, accepted_sizes(ds)),
                    reasons_of(ds));
}

std::vector<int32_t> expand_block_table(std::span<const int32_t> manager_table, int ratio) {
  if (ratio <= 0) throw InvalidArgument(fmt::format("block ratio must be > 0, got {}", ratio));
  std::vector<int32_t> out;
  out.reserve(manager_table.size() * size_t(ratio));
  for (int32_t m : manager_table)
    for (int j = 0; j < ratio; ++j) out.push_back(int32_t(int64_t(m) * ratio + j));
  return out;
}

}  // namespace attnkit
