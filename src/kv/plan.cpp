// KV planning: specs per layer, KV sharing validation, grouping, block-size negotiation per group,
// hybrid (attention + state) alignment, page unification, zeroing policy and memory budget.
#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/log.hpp"
#include "core/strings.hpp"

namespace attnkit {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// "0-31", "3, 7, 11-13"
std::string layer_ranges(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    parts.push_back(j == i ? fmt::format("{}", v[i]) : fmt::format("{}-{}", v[i], v[j]));
    i = j + 1;
  }
  return join(parts, ", ");
}

std::string bytes_str(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.2f} GiB", double(b) / double(1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.2f} MiB", double(b) / double(1ull << 20));
  if (b >= (1ull << 10)) return fmt::format("{:.2f} KiB", double(b) / double(1ull << 10));
  return fmt::format("{} B", b);
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", int(c));
        else
          out += c;
    }
  }
  return out;
}

// Layers with one group_key, before they are split into groups of num_tensors layers.
struct Bucket {
  std::string key;
  std::vector<int> layers;         // with memory
  std::vector<int> shared_layers;  // readers
  std::vector<const Capabilities*> backends;
  std::optional<int> pinned;
  KvLayerSpec spec;
  BlockSizeChoice choice;
  int64_t page = 0;
  // A chunked local group some of whose backends read each chunk as whole blocks: its kernel
  // blocks divide the chunk (Capabilities::chunk_in_whole_blocks); 0 = no such constraint.
  int kernel_divides() const {
    if (spec.kind != KvSpecKind::kChunkedLocal || !spec.attention_chunk_size) return 0;
    for (const Capabilities* c : backends)
      if (c && c->chunk_in_whole_blocks) return *spec.attention_chunk_size;
    return 0;
  }
};

void note(KvPlan& plan, bool warn, const std::string& cause, const std::string& msg) {
  plan.notes.push_back(msg);
  if (warn)
    warn_once(cause, msg);
  else
    log(LogLevel::kInfo, msg);
}

// Renegotiates a bucket for a new manager size forced by the plan (hybrid or page unification).
bool resize_bucket(Bucket& b, int new_block, const std::string& why, KvPlan& plan) {
  const auto k = largest_common_kernel_block(b.backends, new_block, b.kernel_divides());
  if (!k) return false;
  const int old = b.choice.manager_block_size;
  const bool user = b.pinned.has_value();
  b.choice.manager_block_size = new_block;
  b.choice.kernel_block_size = *k;
  b.choice.overrode_user = b.choice.overrode_user || user;
  b.choice.reason = fmt::format("raised from {}{} to {}: {}", old,
                                user ? " (pinned by the user)" : "", new_block, why);
  if (*k != new_block)
    b.choice.reason += fmt::format("; split into {} kernel blocks of {}", new_block / *k, *k);
  b.page = b.spec.page_bytes(new_block);
  note(plan, user, fmt::format("kv-block-override-{}", b.key),
       fmt::format("{}Setting attention block size of layers {} to {} tokens (was {}): {}",
                   user ? "Overriding the user's block size: " : "", layer_ranges(b.layers),
                   new_block, old, why));
  return true;
}

}  // namespace

int64_t KvGroupPlan::blocks_for_tokens(int64_t tokens, int64_t encoder_len) const {
  const int64_t b = manager_block_size;
  switch (kind) {
    case KvSpecKind::kFullAttention:
    case KvSpecKind::kMlaLatent:
      return ceil_div(tokens, b);
    case KvSpecKind::kSlidingWindow:
    case KvSpecKind::kChunkedLocal:  // a chunk's keys are within the last C positions
      return std::min(ceil_div(tokens, b), ceil_div(*spec.local_span() - 1, b) + 1);
    case KvSpecKind::kState:
      return 1;
    case KvSpecKind::kCrossAttention:
      return ceil_div(encoder_len, b);
    case KvSpecKind::kShared:
    case KvSpecKind::kNoCache:
      return 0;
  }
  return 0;
}

const KvGroupPlan& KvPlan::group_of_layer(int layer_index) const {
  for (const auto& g : groups) {
    if (std::find(g.layers.begin(), g.layers.end(), layer_index) != g.layers.end()) return g;
    if (std::find(g.shared_layers.begin(), g.shared_layers.end(), layer_index) !=
        g.shared_layers.end())
      return g;
  }
  throw InvalidArgument(fmt::format("layer {} is in no KV group (no cache, or not a layer of {})",
                                    layer_index, model));
}

const KvLayerSpec& KvPlan::layer(int layer_index) const {
  for (const auto& l : layers)
    if (l.layer_index == layer_index) return l;
  throw InvalidArgument(
      fmt::format("layer {} is not an attention or state layer of {}", layer_index, model));
}

int64_t KvGroupPlan::blocks_at_admission(int64_t tokens, int64_t encoder_len) const {
  return spec.local_span() ? ceil_div(tokens, manager_block_size)
                           : blocks_for_tokens(tokens, encoder_len);
}

int64_t KvPlan::blocks_needed(int64_t tokens, int64_t encoder_len) const {
  int64_t n = 0;
  for (const KvGroupPlan& g : groups) n += g.blocks_at_admission(tokens, encoder_len);
  return n;
}

// After an append of n <= chunk tokens to c computed ones, a sliding group holds the blocks from
// the one holding position c - (w - 1) to the one holding c + n - 1: w - 1 + n positions, which
// span at most ceil((w - 2 + n) / b) + 1 blocks. A chunked local group holds from its chunk's
// first position, at most C - 1 before c: the same bound with w = C (vLLM's admission for
// ChunkedLocalAttentionSpec, ceil((C + n) / b), is no smaller).
int64_t KvGroupPlan::peak_blocks(int64_t tokens, int64_t chunk, int64_t encoder_len) const {
  const std::optional<int> span = spec.local_span();
  if (!span) return blocks_for_tokens(tokens, encoder_len);
  const int64_t b = manager_block_size;
  return std::min(ceil_div(tokens, b), ceil_div(*span - 2 + std::max<int64_t>(chunk, 1), b) + 1);
}

int64_t KvPlan::peak_blocks(int64_t tokens, int64_t chunk, int64_t encoder_len) const {
  int64_t n = 0;
  for (const KvGroupPlan& g : groups) n += g.peak_blocks(tokens, chunk, encoder_len);
  return n;
}

int64_t KvPlan::blocks_for_memory(uint64_t memory) const {
  if (bytes_per_block <= 0 || memory <= uint64_t(scale_bytes)) return 0;
  return int64_t((memory - uint64_t(scale_bytes)) / uint64_t(bytes_per_block));
}

namespace {
// What one request of max_model_len tokens takes of a pool, apart from its growing groups' blocks:
// the window / state / encoder blocks at their peak; and the growing (full / MLA) groups.
struct FixedAndGrowing {
  int64_t fixed = 0;
  int growing = 0;
  int block = 0;  // a growing group's manager block
};
FixedAndGrowing fixed_and_growing(const KvPlan& p) {
  FixedAndGrowing f;
  for (const auto& g : p.groups) {
    if (g.kind == KvSpecKind::kFullAttention || g.kind == KvSpecKind::kMlaLatent) {
      ++f.growing;
      f.block = g.manager_block_size;
    } else {
      f.fixed += g.peak_blocks(p.max_model_len, p.max_tokens_per_step, p.max_encoder_len);
    }
  }
  return f;
}
}  // namespace

int64_t KvPlan::tokens_for_blocks(int64_t n) const {
  const FixedAndGrowing f = fixed_and_growing(*this);
  const int64_t usable = n - 1 - f.fixed;  // the null block
  if (usable < 0) return 0;
  if (!f.growing) return max_model_len;  // only windows / state: bounded per request
  return usable / f.growing * f.block;
}

int64_t KvPlan::min_blocks_for_max_len() const {
  const FixedAndGrowing f = fixed_and_growing(*this);
  return 1 + f.fixed + f.growing;
}

KvPlan plan_kv_cache(const ModelSpec& model,
                     const std::vector<std::vector<const Capabilities*>>& backends_per_layer,
                     const KvPlanOptions& options) {
  if (!backends_per_layer.empty() && backends_per_layer.size() != model.attention_layers.size())
    throw InvalidArgument(fmt::format(
        "plan_kv_cache: backends_per_layer must have one entry per attention layer ({}), got {}",
        model.attention_layers.size(), backends_per_layer.size()));
  if (options.default_block_size <= 0)
    throw InvalidArgument(
        fmt::format("default block size must be > 0, got {}", options.default_block_size));
  KvPlan plan;
  plan.model = model.name;
  plan.max_model_len =
      options.max_model_len > 0 ? options.max_model_len : model.max_position_embeddings;
  if (plan.max_model_len <= 0)
    throw InvalidArgument(fmt::format(
        "the KV plan needs a context length: {} has no max_position_embeddings in its config "
        "and no max_model_len was given",
        model.source.empty() ? model.name : model.source));
  // Encoder lengths are ints: a context length past INT_MAX (some configs state 2^63 - 1) caps.
  if (options.max_tokens_per_step < 1)
    throw InvalidArgument(
        fmt::format("max_tokens_per_step must be >= 1, got {}", options.max_tokens_per_step));
  plan.max_tokens_per_step = options.max_tokens_per_step;
  plan.max_encoder_len =
      options.max_encoder_len > 0
          ? options.max_encoder_len
          : int(std::min<int64_t>(
                model.max_encoder_positions > 0 ? model.max_encoder_positions : plan.max_model_len,
                std::numeric_limits<int>::max()));

  // Specs, by layer index.
  std::map<int, KvLayerSpec> specs;
  std::map<int, std::vector<const Capabilities*>> caps;
  for (size_t i = 0; i < model.attention_layers.size(); ++i) {
    const LayerSpec& l = model.attention_layers[i];
    KvLayerSpec s = kv_layer_spec(l);
    if (options.block_size) s.pinned_block_size = options.block_size;
    if (!specs.emplace(l.layer_index, s).second)
      throw InvalidArgument(fmt::format("layer index {} appears twice", l.layer_index));
    if (!backends_per_layer.empty()) caps[l.layer_index] = backends_per_layer[i];
  }
  for (const StateLayerSpec& l : model.state_layers)
    if (!specs.emplace(l.layer_index, kv_layer_spec(l)).second)
      throw InvalidArgument(fmt::format("layer index {} appears twice", l.layer_index));

  // KV sharing: an earlier layer of the same attention type and cache shape; chains resolve to
  // the layer that owns the memory.
  for (auto& [idx, s] : specs) {
    if (s.kind != KvSpecKind::kShared) continue;
    const int t = *s.shares_with;
    if (t == idx)
      throw InvalidArgument(fmt::format(
          "layer {}: kv_sharing_target_layer cannot be the same as the current layer", idx));
    if (t > idx)
      throw InvalidArgument(fmt::format(
          "layer {}: kv_sharing_target_layer {} must come before the current layer", idx, t));
    auto it = specs.find(t);
    if (it == specs.end() || it->second.kind == KvSpecKind::kState ||
        it->second.kind == KvSpecKind::kNoCache)
      throw InvalidArgument(fmt::format(
          "layer {}: kv_sharing_target_layer {} is not a valid attention layer with a KV cache",
          idx, t));
    const KvLayerSpec& ts = it->second;
    auto mask = [](const KvLayerSpec& x) {
      return (x.sliding_window ? fmt::format(", window {}", *x.sliding_window) : "") +
             (x.attention_chunk_size ? fmt::format(", chunk {}", *x.attention_chunk_size) : "");
    };
    if (ts.attn_type != s.attn_type || ts.sliding_window != s.sliding_window ||
        ts.attention_chunk_size != s.attention_chunk_size)
      throw InvalidArgument(fmt::format(
          "layer {}: kv_sharing_target_layer {} must be the same type as the current layer ({}{}), "
          "got {}{}",
          idx, t, to_string(s.attn_type), mask(s), to_string(ts.attn_type), mask(ts)));
    if (ts.num_kv_heads != s.num_kv_heads || ts.head_size != s.head_size ||
        ts.head_size_v != s.head_size_v || ts.dtype != s.dtype)
      throw InvalidArgument(fmt::format(
          "layer {}: kv_sharing_target_layer {} has a different cache ({} kv heads x {}/{} {}), "
          "expected {} kv heads x {}/{} {}",
          idx, t, ts.num_kv_heads, ts.head_size, ts.head_size_v, to_string(ts.dtype),
          s.num_kv_heads, s.head_size, s.head_size_v, to_string(s.dtype)));
    s.shares_with = ts.kind == KvSpecKind::kShared ? ts.shares_with : t;  // earlier: resolved
  }

  // Buckets of equal specs, in layer order.
  std::vector<Bucket> buckets;
  std::map<int, size_t> bucket_of;
  for (auto& [idx, s] : specs) {
    plan.layers.push_back(s);
    if (!s.has_memory()) continue;
    const std::string key = s.group_key();
    auto it = std::find_if(buckets.begin(), buckets.end(), [&](auto& b) { return b.key == key; });
    if (it == buckets.end()) {
      buckets.push_back(Bucket{key, {}, {}, {}, std::nullopt, s, {}, 0});
      it = buckets.end() - 1;
    }
    it->layers.push_back(idx);
    bucket_of[idx] = size_t(it - buckets.begin());
    for (const Capabilities* c : caps[idx]) it->backends.push_back(c);
    if (s.pinned_block_size) {
      if (it->pinned && *it->pinned != *s.pinned_block_size)
        throw InvalidArgument(fmt::format("layers {} pin different block sizes ({} and {})",
                                          layer_ranges(it->layers), *it->pinned,
                                          *s.pinned_block_size));
      it->pinned = s.pinned_block_size;
    }
  }
  for (auto& [idx, s] : specs) {
    if (s.kind != KvSpecKind::kShared) continue;
    Bucket& b = buckets[bucket_of.at(*s.shares_with)];
    b.shared_layers.push_back(idx);
    // The reader's backend reads the target's cache: it takes part in the negotiation.
    for (const Capabilities* c : caps[idx]) b.backends.push_back(c);
  }
  if (buckets.empty()) {
    plan.notes.push_back("no layer keeps a KV cache");
    return plan;
  }

  // Block sizes per bucket.
  for (Bucket& b : buckets) {
    if (b.spec.kind == KvSpecKind::kState) {
      b.page = b.spec.state_bytes;
      continue;
    }
    try {
      b.choice = negotiate_block_size(b.backends, b.pinned, options.default_block_size,
                                      b.kernel_divides());
    } catch (const Unsupported& e) {
      throw Unsupported(fmt::format("KV group of layers {}: {}", layer_ranges(b.layers), e.what()),
                        e.reasons());
    }
    b.page = b.spec.page_bytes(b.choice.manager_block_size);
  }

  // Hybrid alignment: the attention page must cover the largest state page; the block grows in
  // multiples of its current size (a size every backend already accepts as a split).
  int64_t state_page = 0;
  for (const Bucket& b : buckets)
    if (b.spec.kind == KvSpecKind::kState) state_page = std::max(state_page, b.spec.state_bytes);
  for (Bucket& b : buckets) {
    if (b.spec.kind == KvSpecKind::kState) continue;
    if (!state_page || b.page >= state_page) continue;
    const int align = b.choice.manager_block_size;
    const int64_t per_token = b.spec.bytes_per_token();
    const int64_t blocks = align * ceil_div(state_page, int64_t(align) * per_token);
    if (blocks > (1 << 20))
      throw Unsupported(fmt::format(
          "state page of {} bytes needs an attention block of {} tokens for layers {} ({} bytes "
          "per token), beyond the supported 1048576",
          state_page, blocks, layer_ranges(b.layers), per_token));
    const std::string why = fmt::format(
        "ensures that the attention page ({} tokens x {} B = {} B) is >= the state page ({} B)",
        blocks, per_token, blocks * per_token, state_page);
    if (!resize_bucket(b, int(blocks), why, plan))
      throw Unsupported(
          fmt::format("no kernel block accepted by every backend divides {}: {}", blocks, why));
  }

  // Page unification: one page size for every group (they share the tensors).
  int64_t target = 0;
  for (const Bucket& b : buckets) target = std::max(target, b.page);
  if (buckets.size() > 1) {
    for (Bucket& b : buckets) {
      if (b.spec.kind == KvSpecKind::kState || b.page == target || target % b.page) continue;
      const int64_t factor = target / b.page;
      resize_bucket(b, int(b.choice.manager_block_size * factor),
                    fmt::format("page unification: the largest page is {} B, {}x this group's",
                                target, factor),
                    plan);
    }
  }
  int64_t ratio_lcm = 1;
  for (const Bucket& b : buckets)
    if (b.spec.kind != KvSpecKind::kState)
      ratio_lcm = std::lcm(ratio_lcm, int64_t(b.choice.ratio()));
  const int64_t page = ceil_div(target, ratio_lcm) * ratio_lcm;
  for (Bucket& b : buckets) {
    if (b.page < page && b.spec.kind == KvSpecKind::kState) {
      note(plan, false, "kv-state-pad",
           fmt::format("Padding the state page of layers {} by {:.2f}% ({} -> {} B) to match the "
                       "attention page",
                       layer_ranges(b.layers), 100.0 * double(page - b.page) / double(b.page),
                       b.page, page));
    }
  }

  // Groups: every bucket split into chunks of `group_size` layers (vLLM's rule).
  size_t min_n = SIZE_MAX, max_n = 0;
  for (const Bucket& b : buckets) {
    min_n = std::min(min_n, b.layers.size());
    max_n = std::max(max_n, b.layers.size());
  }
  size_t group_size = buckets.size() == 1 ? max_n : min_n;
  if (buckets.size() > 1 && double(max_n) < 1.25 * double(min_n)) group_size = max_n;
  plan.num_tensors = int(group_size);
  plan.page_bytes = page;
  plan.bytes_per_block = page * int64_t(group_size);

  int attention_block = 0;
  for (const Bucket& b : buckets)
    if (b.spec.kind != KvSpecKind::kState) attention_block = b.choice.manager_block_size;
  for (const Bucket& b : buckets) {
    for (size_t start = 0; start < b.layers.size(); start += group_size) {
      KvGroupPlan g;
      g.group_id = int(plan.groups.size());
      g.kind = b.spec.kind;
      g.spec = b.spec;
      g.layers.assign(b.layers.begin() + long(start),
                      b.layers.begin() + long(std::min(b.layers.size(), start + group_size)));
      for (int s : b.shared_layers) {
        const int root = *specs.at(s).shares_with;
        if (std::find(g.layers.begin(), g.layers.end(), root) != g.layers.end())
          g.shared_layers.push_back(s);
      }
      std::set<std::string> seen;
      for (const Capabilities* c : b.backends)
        if (c && seen.insert(c->name).second) g.backends.push_back(c->name);
      if (b.spec.kind == KvSpecKind::kState) {
        // One page per request; the block size only matters for prefix-cache alignment.
        g.manager_block_size = g.kernel_block_size =
            attention_block ? attention_block : options.default_block_size;
        g.block_size_reason = "state: one page per request";
      } else {
        g.manager_block_size = b.choice.manager_block_size;
        g.kernel_block_size = b.choice.kernel_block_size;
        g.block_size_reason = b.choice.reason;
      }
      g.bytes_per_token = b.spec.bytes_per_token() * int64_t(g.layers.size());
      g.real_page_bytes = b.page;
      g.page_bytes = page;
      g.kernel_page_stride = page / g.ratio();
      plan.groups.push_back(std::move(g));
    }
  }

  for (const KvLayerSpec& s : plan.layers) {
    if (!s.is_attention()) continue;
    plan.bytes_per_token += s.bytes_per_token();
    plan.scale_bytes += s.scale_bytes();
    plan.num_scale_values += s.scale_count();
  }

  // Zeroing: state is read before it is fully written; a mixed-precision cache can decode stale
  // bytes of another group's dtype as NaN/Inf.
  std::set<std::pair<int, int>> formats;
  for (const Bucket& b : buckets)
    if (b.spec.kind != KvSpecKind::kState)
      formats.insert({int(b.spec.dtype), int(b.spec.model_dtype)});
  const bool has_state = state_page > 0;
  if (has_state) {
    plan.needs_zeroing = true;
    plan.zeroing_reason = "state layers read their state before it is fully written";
  } else if (formats.size() > 1) {
    plan.needs_zeroing = true;
    plan.zeroing_reason =
        "mixed-precision cache: a block reused by another group could decode stale bytes as "
        "NaN/Inf";
  } else {
    plan.zeroing_reason = "uniform-precision attention cache";
  }

  if (options.memory_bytes) {
    plan.memory_bytes = options.memory_bytes;
    plan.num_blocks = plan.blocks_for_memory(*options.memory_bytes);
    plan.max_tokens = plan.tokens_for_blocks(plan.num_blocks);
  }
  return plan;
}

std::vector<std::string> describe_kv_plan(const KvPlan& p) {
  std::vector<std::string> out;
  if (p.groups.empty()) {  // encoder-only models: every layer reads its step's own K/V
    out.push_back("KV cache: none");
    for (const std::string& n : p.notes) out.push_back("  note: " + n);
    return out;
  }
  out.push_back(fmt::format(
      "KV cache: {} group(s), {} tensor(s) of one {} page per block ({} per block), zeroing of "
      "fresh blocks {} ({})",
      p.groups.size(), p.num_tensors, bytes_str(uint64_t(p.page_bytes)),
      bytes_str(uint64_t(p.bytes_per_block)), p.needs_zeroing ? "on" : "off", p.zeroing_reason));
  for (const KvGroupPlan& g : p.groups) {
    std::string shape;
    if (g.kind == KvSpecKind::kState)
      shape = fmt::format("{} B state per request", g.spec.state_bytes);
    else
      shape = fmt::format("{} {} kv head(s) x {}{}",
                          g.spec.dtype == KvCacheDType::kAuto ? "float32" : to_string(g.spec.dtype),
                          g.spec.num_kv_heads, g.spec.head_size,
                          g.kind == KvSpecKind::kMlaLatent || g.spec.head_size_v == g.spec.head_size
                              ? ""
                              : fmt::format("/{}", g.spec.head_size_v));
    if (g.spec.sliding_window) shape += fmt::format(", window {}", *g.spec.sliding_window);
    if (g.spec.attention_chunk_size)
      shape += fmt::format(", chunk {}", *g.spec.attention_chunk_size);
    out.push_back(fmt::format("  group {}: {} layers {} ({}){}: {}", g.group_id, to_string(g.kind),
                              layer_ranges(g.layers), g.layers.size(),
                              g.shared_layers.empty() ? ""
                                                      : fmt::format(" + shared readers {}",
                                                                    layer_ranges(g.shared_layers)),
                              shape));
    if (g.kind != KvSpecKind::kState) {
      out.push_back(fmt::format(
          "    block size {} (kernel block {}{}): {}", g.manager_block_size, g.kernel_block_size,
          g.ratio() > 1 ? fmt::format(", {} per block", g.ratio()) : "", g.block_size_reason));
      out.push_back(fmt::format(
          "    bytes per token {} ({} per layer), page {} B{}", g.bytes_per_token,
          g.spec.bytes_per_token(), g.real_page_bytes,
          g.page_bytes != g.real_page_bytes ? fmt::format(" padded to {} B", g.page_bytes) : ""));
    } else {
      out.push_back(fmt::format(
          "    page {} B{}", g.real_page_bytes,
          g.page_bytes != g.real_page_bytes ? fmt::format(" padded to {} B", g.page_bytes) : ""));
    }
    if (!g.backends.empty()) out.push_back("    backends: " + join(g.backends, ", "));
  }
  std::string scales = "none";
  if (p.num_scale_values)
    scales = fmt::format("{} fp32 values ({} B), per layer beside the cache (not per page)",
                         p.num_scale_values, p.scale_bytes);
  out.push_back(fmt::format("  bytes per token: {} (all attention layers); scales: {}",
                            p.bytes_per_token, scales));
  for (const std::string& n : p.notes) out.push_back("  note: " + n);
  if (p.memory_bytes)
    out.push_back(
        fmt::format("  memory {}: {} blocks, {} tokens (after one request's fixed state / "
                    "window / encoder blocks; max_model_len {}, prefill chunks of up to {} "
                    "tokens)",
                    bytes_str(*p.memory_bytes), p.num_blocks, p.max_tokens, p.max_model_len,
                    p.max_tokens_per_step));
  return out;
}

std::string kv_plan_to_json(const KvPlan& p) {
  std::vector<std::string> groups;
  auto ints = [](const std::vector<int>& v) {
    std::vector<std::string> s;
    for (int x : v) s.push_back(std::to_string(x));
    return "[" + join(s, ",") + "]";
  };
  auto strs = [](const std::vector<std::string>& v) {
    std::vector<std::string> s;
    for (const auto& x : v) s.push_back("\"" + json_escape(x) + "\"");
    return "[" + join(s, ",") + "]";
  };
  for (const KvGroupPlan& g : p.groups)
    groups.push_back(fmt::format(
        "{{\"group_id\":{},\"kind\":\"{}\",\"layers\":{},\"shared_layers\":{},\"backends\":{},"
        "\"kv_cache_dtype\":\"{}\",\"num_kv_heads\":{},\"head_size\":{},\"head_size_v\":{},"
        "\"sliding_window\":{},\"attention_chunk_size\":{},\"state_bytes\":{},"
        "\"manager_block_size\":{},"
        "\"kernel_block_size\":{},\"block_size_reason\":\"{}\",\"bytes_per_token\":{},"
        "\"real_page_bytes\":{},\"page_bytes\":{}}}",
        g.group_id, to_string(g.kind), ints(g.layers), ints(g.shared_layers), strs(g.backends),
        to_string(g.spec.dtype), g.spec.num_kv_heads, g.spec.head_size, g.spec.head_size_v,
        g.spec.sliding_window ? std::to_string(*g.spec.sliding_window) : "null",
        g.spec.attention_chunk_size ? std::to_string(*g.spec.attention_chunk_size) : "null",
        g.spec.state_bytes, g.manager_block_size, g.kernel_block_size,
        json_escape(g.block_size_reason), g.bytes_per_token, g.real_page_bytes, g.page_bytes));
  return fmt::format(
      "{{\"model\":\"{}\",\"groups\":[{}],\"num_tensors\":{},\"page_bytes\":{},"
      "\"bytes_per_block\":{},\"bytes_per_token\":{},\"scale_bytes\":{},\"num_scale_values\":{},"
      "\"max_model_len\":{},\"needs_zeroing\":{},\"zeroing_reason\":\"{}\",\"notes\":{},"
      "\"max_tokens_per_step\":{},\"memory_bytes\":{},\"num_blocks\":{},\"max_tokens\":{}}}",
      json_escape(p.model), join(groups, ","), p.num_tensors, p.page_bytes, p.bytes_per_block,
      p.bytes_per_token, p.scale_bytes, p.num_scale_values, p.max_model_len,
      p.needs_zeroing ? "true" : "false", json_escape(p.zeroing_reason), strs(p.notes),
      p.max_tokens_per_step, p.memory_bytes ? std::to_string(*p.memory_bytes) : "null",
      p.num_blocks, p.max_tokens);
}

}  // namespace attnkit
