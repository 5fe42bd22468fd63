// Per-request KV cache manager: block lists per group, on-demand growth, sliding-window release,
// prefix-cache reuse, block tables and slot mappings. Every mutation is checked in full before
// the pool is touched (strong exception guarantee).
#include <algorithm>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"

namespace attnkit {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

KvCacheManager::KvCacheManager(const KvPlan& plan, int64_t num_blocks, KvManagerOptions options)
    : plan_(plan), options_(options), pool_(num_blocks, plan.needs_zeroing) {
  if (plan_.groups.empty())
    throw InvalidArgument("KvCacheManager: the plan has no KV group (no layer keeps a cache)");
}

bool KvCacheManager::prefix_caching_on() const {
  if (!options_.enable_prefix_caching) return false;
  return std::all_of(plan_.groups.begin(), plan_.groups.end(), [](const KvGroupPlan& g) {
    return g.kind == KvSpecKind::kFullAttention || g.kind == KvSpecKind::kMlaLatent;
  });
}

const KvCacheManager::Request& KvCacheManager::get(RequestId id) const {
  auto it = requests_.find(id);
  if (it == requests_.end())
    throw InvalidArgument(fmt::format("request {} is not known to the KV cache manager", id));
  return it->second;
}

bool KvCacheManager::has_request(RequestId id) const { return requests_.count(id) != 0; }
int64_t KvCacheManager::num_tokens(RequestId id) const { return int64_t(get(id).tokens.size()); }
int64_t KvCacheManager::num_cached_tokens(RequestId id) const { return get(id).cached_tokens; }

const std::vector<int32_t>& KvCacheManager::blocks(RequestId id, int group) const {
  const Request& r = get(id);
  if (group < 0 || group >= int(r.blocks.size()))
    throw InvalidArgument(
        fmt::format("KV group must be in [0, {}), got {}", r.blocks.size(), group));
  return r.blocks[size_t(group)];
}

KvCacheManager::Growth KvCacheManager::growth(const Request& r, int64_t new_total) const {
  Growth g;
  g.add.assign(plan_.groups.size(), 0);
  g.release.resize(plan_.groups.size());
  const int64_t computed = int64_t(r.tokens.size());
  std::set<int32_t> freed;
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi) {
    const KvGroupPlan& gp = plan_.groups[gi];
    const auto& bl = r.blocks[gi];
    const int64_t b = gp.manager_block_size;
    switch (gp.kind) {
      case KvSpecKind::kState:
      case KvSpecKind::kCrossAttention:
        break;  // sized at admission, no growth
      case KvSpecKind::kSlidingWindow:
      case KvSpecKind::kChunkedLocal: {
        // The earliest query of this step (position `computed`) sees from computed - (w - 1), or
        // from its chunk's first position.
        const int64_t skipped = gp.spec.first_visible_key(computed);
        const int64_t n = std::min<int64_t>(skipped / b, int64_t(bl.size()));
        for (int64_t i = 0; i < n; ++i) {
          if (bl[size_t(i)] == BlockPool::kNullBlock) continue;
          g.release[gi].push_back(size_t(i));
          if (pool_.ref_count(bl[size_t(i)]) == 1 && freed.insert(bl[size_t(i)]).second)
            ++g.freed_blocks;
        }
        g.add[gi] = std::max<int64_t>(0, ceil_div(new_total, b) - int64_t(bl.size()));
        break;
      }
      default:
        g.add[gi] = std::max<int64_t>(0, ceil_div(new_total, b) - int64_t(bl.size()));
    }
    g.new_blocks += g.add[gi];
  }
  return g;
}

void KvCacheManager::apply(Request& r, const Growth& g) {
  // Checked by the caller: new_blocks <= free + freed. Release first so the blocks can be reused.
  for (size_t gi = 0; gi < g.release.size(); ++gi) {
    auto& bl = r.blocks[gi];
    std::vector<int32_t> ids;
    for (size_t i : g.release[gi]) {
      ids.push_back(bl[i]);
      bl[i] = BlockPool::kNullBlock;
    }
    if (!ids.empty()) pool_.free(ids);
  }
  std::vector<int32_t> fresh = pool_.allocate(g.new_blocks);
  size_t k = 0;
  for (size_t gi = 0; gi < g.add.size(); ++gi)
    for (int64_t i = 0; i < g.add[gi]; ++i) r.blocks[gi].push_back(fresh[k++]);
}

// Each group's hash chain starts from its own seed: groups share the pool, so equal token blocks
// of two groups must not find each other's pages.
uint64_t KvCacheManager::group_seed(size_t group) {
  return BlockPool::hash_block(0x9e3779b97f4a7c15ull, std::span<const int32_t>()) ^ (group + 1);
}

void KvCacheManager::register_full_blocks(Request& r) {
  if (!prefix_caching_on()) return;
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi) {
    const int64_t b = plan_.groups[gi].manager_block_size;
    const int64_t full = std::min<int64_t>(r.computed_tokens, int64_t(r.tokens.size())) / b;
    for (int64_t i = r.num_hashed[gi]; i < full; ++i) {
      const uint64_t h = BlockPool::hash_block(
          r.last_hash[gi], std::span<const int32_t>(r.tokens.data() + i * b, size_t(b)));
      pool_.cache_block(r.blocks[gi][size_t(i)], h);
      r.last_hash[gi] = h;
    }
    r.num_hashed[gi] = std::max(r.num_hashed[gi], full);
  }
}

int64_t KvCacheManager::add_request(RequestId id, std::span<const int32_t> prompt,
                                    int64_t encoder_len) {
  if (requests_.count(id))
    throw InvalidArgument(fmt::format("request {} is already in the KV cache manager", id));
  if (int64_t(prompt.size()) > plan_.max_model_len)
    throw InvalidArgument(fmt::format("request {}: {} prompt tokens exceed max_model_len {}", id,
                                      prompt.size(), plan_.max_model_len));
  const bool has_cross = std::any_of(plan_.groups.begin(), plan_.groups.end(),
                                     [](auto& g) { return g.kind == KvSpecKind::kCrossAttention; });
  if (encoder_len < 0 || encoder_len > plan_.max_encoder_len || (has_cross && encoder_len == 0))
    throw InvalidArgument(
        fmt::format("request {}: encoder length must be in [{}, {}] for this model, got {}", id,
                    has_cross ? 1 : 0, plan_.max_encoder_len, encoder_len));

  Request r;
  r.encoder_len = encoder_len;
  r.blocks.resize(plan_.groups.size());
  r.num_hashed.assign(plan_.groups.size(), 0);
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi) r.last_hash.push_back(group_seed(gi));

  // Prefix hits (peek only): full blocks of the prompt, leaving at least one token to compute;
  // the hit length is the shortest over the groups.
  std::vector<std::vector<int32_t>> hits(plan_.groups.size());
  int64_t hit_tokens = 0;
  if (prefix_caching_on() && !prompt.empty()) {
    hit_tokens = INT64_MAX;
    for (size_t gi = 0; gi < plan_.groups.size(); ++gi) {
      const int64_t b = plan_.groups[gi].manager_block_size;
      uint64_t h = group_seed(gi);
      int64_t n = 0;
      for (; (n + 1) * b <= int64_t(prompt.size()) - 1; ++n) {
        h = BlockPool::hash_block(h, prompt.subspan(size_t(n * b), size_t(b)));
        auto blk = pool_.find_cached(h);
        if (!blk) break;
        hits[gi].push_back(*blk);
      }
      hit_tokens = std::min(hit_tokens, n * b);
    }
    // Every group must hold whole blocks of the hit: round down to the common block multiple.
    int64_t common = 1;
    for (const KvGroupPlan& g : plan_.groups)
      common = std::lcm(common, int64_t(g.manager_block_size));
    hit_tokens -= hit_tokens % common;
    for (size_t gi = 0; gi < plan_.groups.size(); ++gi)
      hits[gi].resize(size_t(hit_tokens / plan_.groups[gi].manager_block_size));
  }
  std::set<int32_t> hit_free;  // hits that sit in the free queue: taking them costs free blocks
  for (const auto& hg : hits)
    for (int32_t b : hg)
      if (pool_.ref_count(b) == 0) hit_free.insert(b);

  std::vector<int64_t> need(plan_.groups.size());  // fresh blocks per group
  int64_t new_blocks = 0;
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi) {  // prefix hits only in token groups
    need[gi] = plan_.groups[gi].blocks_at_admission(int64_t(prompt.size()), encoder_len) -
               int64_t(hits[gi].size());
    new_blocks += need[gi];
  }
  if (new_blocks > pool_.num_free() - int64_t(hit_free.size()))
    throw OutOfMemory(fmt::format(
        "request {}: needs {} new KV blocks for {} tokens, {} free of {} usable", id, new_blocks,
        prompt.size(), pool_.num_free() - int64_t(hit_free.size()), pool_.num_usable()));

  // Commit (nothing below can fail).
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi)
    for (int32_t b : hits[gi]) r.blocks[gi].push_back(*pool_.lookup(*pool_.block_hash(b)));
  std::vector<int32_t> fresh = pool_.allocate(new_blocks);
  size_t k = 0;
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi)
    for (int64_t i = 0; i < need[gi]; ++i) r.blocks[gi].push_back(fresh[k++]);
  r.tokens.assign(prompt.begin(), prompt.end());
  r.cached_tokens = hit_tokens;
  r.computed_tokens = hit_tokens;
  requests_.emplace(id, std::move(r));
  return hit_tokens;
}

void KvCacheManager::append_tokens(RequestId id, std::span<const int32_t> tokens) {
  auto it = requests_.find(id);
  if (it == requests_.end())
    throw InvalidArgument(fmt::format("request {} is not known to the KV cache manager", id));
  Request& r = it->second;
  const int64_t new_total = int64_t(r.tokens.size()) + int64_t(tokens.size());
  if (new_total > plan_.max_model_len)
    throw InvalidArgument(fmt::format("request {}: {} tokens exceed max_model_len {}", id,
                                      new_total, plan_.max_model_len));
  const Growth g = growth(r, new_total);
  if (g.new_blocks > pool_.num_free() + g.freed_blocks)
    throw OutOfMemory(fmt::format(
        "request {}: needs {} new KV blocks to grow to {} tokens, {} free of {} usable", id,
        g.new_blocks, new_total, pool_.num_free() + g.freed_blocks, pool_.num_usable()));
  r.tokens.reserve(size_t(new_total));  // may throw bad_alloc before anything changed
  for (auto& bl : r.blocks) bl.reserve(bl.size() + size_t(g.new_blocks));
  apply(r, g);
  r.tokens.insert(r.tokens.end(), tokens.begin(), tokens.end());
}

void KvCacheManager::mark_computed(RequestId id, int64_t num_tokens) {
  auto it = requests_.find(id);
  if (it == requests_.end())
    throw InvalidArgument(fmt::format("request {} is not known to the KV cache manager", id));
  Request& r = it->second;
  if (num_tokens < 0 || num_tokens > int64_t(r.tokens.size()))
    throw InvalidArgument(
        fmt::format("request {}: computed tokens must be in [0, {}] (its length), got {}", id,
                    r.tokens.size(), num_tokens));
  r.computed_tokens = std::max(r.computed_tokens, num_tokens);
  register_full_blocks(r);
}

void KvCacheManager::free_request(RequestId id) {
  auto it = requests_.find(id);
  if (it == requests_.end())
    throw InvalidArgument(fmt::format("request {} is not known to the KV cache manager", id));
  // Free the tail first so that the LRU queue evicts a sequence's last blocks before its prefix.
  std::vector<int32_t> ids;
  for (const auto& bl : it->second.blocks)
    for (auto b = bl.rbegin(); b != bl.rend(); ++b)
      if (*b != BlockPool::kNullBlock) ids.push_back(*b);
  pool_.free(ids);
  requests_.erase(it);
}

std::vector<int32_t> KvCacheManager::block_table(RequestId id, int group) const {
  return expand_block_table(blocks(id, group), plan_.groups[size_t(group)].ratio());
}

void KvCacheManager::fill_block_tables(std::span<const RequestId> ids, int group, int32_t* out,
                                       int stride) const {
  if (!out || stride <= 0)
    throw InvalidArgument(
        fmt::format("fill_block_tables: need an output and stride > 0, got {}", stride));
  std::vector<std::vector<int32_t>> rows;
  for (RequestId id : ids) {
    rows.push_back(block_table(id, group));
    if (int64_t(rows.back().size()) > stride)
      throw InvalidArgument(fmt::format(
          "fill_block_tables: request {} has {} kernel blocks, more than the row stride {}", id,
          rows.back().size(), stride));
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    int32_t* row = out + i * size_t(stride);
    std::fill(row, row + stride, BlockPool::kNullBlock);
    std::copy(rows[i].begin(), rows[i].end(), row);
  }
}

std::vector<int64_t> KvCacheManager::slot_mapping(RequestId id, int group, int64_t start,
                                                  int64_t count) const {
  const Request& r = get(id);
  const auto& bl = blocks(id, group);
  const KvGroupPlan& g = plan_.groups[size_t(group)];
  if (g.kind == KvSpecKind::kState)
    throw InvalidArgument(
        fmt::format("KV group {} holds state, not tokens: it has no slot mapping", group));
  const int64_t limit =
      g.kind == KvSpecKind::kCrossAttention ? r.encoder_len : int64_t(r.tokens.size());
  if (start < 0 || count < 0 || start + count > limit)
    throw InvalidArgument(
        fmt::format("slot_mapping: positions [{}, {}) must lie within the request's {} tokens",
                    start, start + count, limit));
  std::vector<int64_t> out(static_cast<size_t>(count));
  const int64_t b = g.manager_block_size;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t pos = start + i;
    const int32_t m = bl[size_t(pos / b)];
    const bool cached = g.kind != KvSpecKind::kCrossAttention && pos < r.cached_tokens;
    // A manager block is `ratio` consecutive kernel blocks: the kernel slot equals m * b + off.
    out[size_t(i)] = (cached || m == BlockPool::kNullBlock) ? -1 : int64_t(m) * b + pos % b;
  }
  return out;
}

}  // namespace attnkit
