// Block pool: intrusive LRU free queue (O(1) allocate / free / take-out of a cached block),
// reference counts, prefix-hash cache and the list of fresh blocks to zero.
#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"

namespace attnkit {

BlockPool::BlockPool(int64_t num_blocks, bool zero_fresh_blocks) : zero_fresh_(zero_fresh_blocks) {
  if (num_blocks < 2 || num_blocks > INT32_MAX)
    throw InvalidArgument(
        fmt::format("block pool needs 2..{} blocks (block 0 is the null block), got {}", INT32_MAX,
                    num_blocks));
  const size_t n = size_t(num_blocks);
  ref_.assign(n, 0);
  prev_.assign(n, -1);
  next_.assign(n, -1);
  in_queue_.assign(n, 0);
  hash_.assign(n, std::nullopt);
  ref_[0] = 1;  // the null block is permanently owned by the pool
  for (int32_t b = 1; b < int32_t(n); ++b) push_back(b);
}

void BlockPool::check_id(int32_t b) const {
  if (b <= 0 || b >= int32_t(ref_.size()))
    throw InvalidArgument(
        fmt::format("block id must be in [1, {}) (0 is the null block), got {}", ref_.size(), b));
}

void BlockPool::unlink(int32_t b) {
  const int32_t p = prev_[size_t(b)], n = next_[size_t(b)];
  if (p >= 0)
    next_[size_t(p)] = n;
  else
    head_ = n;
  if (n >= 0)
    prev_[size_t(n)] = p;
  else
    tail_ = p;
  prev_[size_t(b)] = next_[size_t(b)] = -1;
  in_queue_[size_t(b)] = 0;
  --free_count_;
}

void BlockPool::push_back(int32_t b) {
  prev_[size_t(b)] = tail_;
  next_[size_t(b)] = -1;
  if (tail_ >= 0)
    next_[size_t(tail_)] = b;
  else
    head_ = b;
  tail_ = b;
  in_queue_[size_t(b)] = 1;
  ++free_count_;
}

std::vector<int32_t> BlockPool::allocate(int64_t n) {
  if (n < 0) throw InvalidArgument(fmt::format("cannot allocate {} blocks", n));
  if (n > free_count_)
    throw OutOfMemory(fmt::format("block pool: {} blocks requested, {} free of {} usable", n,
                                  free_count_, num_usable()));
  std::vector<int32_t> out;
  out.reserve(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const int32_t b = head_;
    unlink(b);
    if (hash_[size_t(b)]) {  // evict the least recently freed cached block
      hash_to_block_.erase(*hash_[size_t(b)]);
      hash_[size_t(b)].reset();
    }
    ref_[size_t(b)] = 1;
    out.push_back(b);
    if (zero_fresh_) to_zero_.push_back(b);
  }
  return out;
}

void BlockPool::free(std::span<const int32_t> blocks) {
  // Validate first (count repeated ids), so a bad call changes nothing.
  std::unordered_map<int32_t, int> drops;
  for (int32_t b : blocks) {
    check_id(b);
    if (++drops[b] > ref_[size_t(b)])
      throw InvalidArgument(
          fmt::format("block {} freed more often than it is referenced ({})", b, ref_[size_t(b)]));
  }
  for (int32_t b : blocks)
    if (--ref_[size_t(b)] == 0) push_back(b);
}

void BlockPool::share(int32_t b) {
  check_id(b);
  if (ref_[size_t(b)] <= 0)
    throw InvalidArgument(fmt::format("block {} cannot be shared: it is free", b));
  ++ref_[size_t(b)];
}

int BlockPool::ref_count(int32_t b) const {
  if (b < 0 || b >= int32_t(ref_.size()))
    throw InvalidArgument(fmt::format("block id must be in [0, {}), got {}", ref_.size(), b));
  return ref_[size_t(b)];
}

uint64_t BlockPool::hash_block(uint64_t parent, std::span<const int32_t> tokens) {
  // FNV-1a over the parent hash and the token ids, then a splitmix finalizer.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  mix(parent);
  mix(tokens.size());
  for (int32_t t : tokens) mix(uint64_t(uint32_t(t)));
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

void BlockPool::cache_block(int32_t b, uint64_t hash) {
  check_id(b);
  if (ref_[size_t(b)] <= 0)
    throw InvalidArgument(fmt::format("block {} cannot be cached: it is free", b));
  if (hash_[size_t(b)]) return;            // already cached (first hash wins)
  if (hash_to_block_.count(hash)) return;  // another block holds the same content
  hash_[size_t(b)] = hash;
  hash_to_block_[hash] = b;
}

std::optional<int32_t> BlockPool::lookup(uint64_t hash) {
  auto it = hash_to_block_.find(hash);
  if (it == hash_to_block_.end()) return std::nullopt;
  const int32_t b = it->second;
  if (ref_[size_t(b)] == 0) unlink(b);
  ++ref_[size_t(b)];
  return b;
}

std::optional<uint64_t> BlockPool::block_hash(int32_t b) const {
  check_id(b);
  return hash_[size_t(b)];
}

std::optional<int32_t> BlockPool::find_cached(uint64_t hash) const {
  auto it = hash_to_block_.find(hash);
  if (it == hash_to_block_.end()) return std::nullopt;
  return it->second;
}

std::vector<int32_t> BlockPool::take_blocks_to_zero() {
  std::vector<int32_t> out;
  out.swap(to_zero_);
  return out;
}

void BlockPool::zero_pending(BlockZeroer& zeroer) {
  if (to_zero_.empty()) return;
  // A block freed and reallocated within one step appears twice: zero it once.
  std::vector<uint8_t> seen(ref_.size(), 0);
  std::vector<int32_t> ids;
  for (int32_t b : to_zero_)
    if (!seen[size_t(b)]++) ids.push_back(b);
  zeroer.zero_blocks(ids);
  to_zero_.clear();
}

void BlockPool::check_invariants() const {
  if (ref_[0] != 1 || in_queue_[0]) throw Error("null block must stay referenced and out of queue");
  int64_t walked = 0;
  int32_t prev = -1;
  for (int32_t b = head_; b >= 0; b = next_[size_t(b)]) {
    if (prev_[size_t(b)] != prev) throw Error(fmt::format("free queue link broken at {}", b));
    if (!in_queue_[size_t(b)]) throw Error(fmt::format("block {} in queue but not marked", b));
    if (ref_[size_t(b)] != 0)
      throw Error(fmt::format("block {} free with ref {}", b, ref_[size_t(b)]));
    if (++walked > free_count_) throw Error("free queue longer than free count (cycle?)");
    prev = b;
  }
  if (prev != tail_) throw Error("free queue tail mismatch");
  if (walked != free_count_) throw Error("free count mismatch");
  int64_t used = 0;
  for (size_t b = 1; b < ref_.size(); ++b) {
    if (ref_[b] < 0) throw Error(fmt::format("block {} has negative ref {}", b, ref_[b]));
    if (ref_[b] > 0) {
      ++used;
      if (in_queue_[b]) throw Error(fmt::format("block {} referenced and free", b));
    } else if (!in_queue_[b]) {
      throw Error(fmt::format("block {} unreferenced but not free", b));
    }
    if (hash_[b]) {
      auto it = hash_to_block_.find(*hash_[b]);
      if (it == hash_to_block_.end() || it->second != int32_t(b))
        throw Error(fmt::format("block {} hash not indexed", b));
    }
  }
  for (const auto& [h, b] : hash_to_block_)
    if (!hash_[size_t(b)] || *hash_[size_t(b)] != h) throw Error("stale hash index entry");
  if (used + free_count_ != num_usable()) throw Error("free + used != usable blocks");
}

}  // namespace attnkit
