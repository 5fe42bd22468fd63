// Block pool invariants, prefix caching, the per-request manager and zeroing.
#include <cstring>
#include <map>
#include <random>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "kv_test_util.hpp"

namespace attnkit {
namespace {

using kvtest::attn_layer;
using ::testing::HasSubstr;

TEST(BlockPool, RandomAllocateFreeShareEvictKeepsInvariants) {
  std::mt19937 rng(1234);
  BlockPool pool(257, /*zero_fresh_blocks=*/true);
  std::vector<std::vector<int32_t>> owners;  // each owner holds one reference per listed block
  std::map<int32_t, int> held;               // the model's reference count per block
  std::vector<uint64_t> hashes;
  uint64_t next_hash = 1;
  int allocations = 0, hits = 0, evictions = 0;
  for (int step = 0; step < 20000; ++step) {
    const int op = int(rng() % 5);
    if (op == 0) {  // allocate
      const int64_t n = rng() % 12;
      const int64_t free_before = pool.num_free();
      const int64_t cached_before = pool.num_cached();
      if (n > free_before) {
        ASSERT_THROW(pool.allocate(n), OutOfMemory);
        ASSERT_EQ(pool.num_free(), free_before);
        continue;
      }
      auto got = pool.allocate(n);
      for (int32_t b : got) {
        ASSERT_EQ(held[b], 0) << "block " << b << " handed out while owned";
        ASSERT_NE(b, BlockPool::kNullBlock);
        ++held[b];
      }
      evictions += int(cached_before - pool.num_cached());
      allocations += int(n);
      owners.push_back(std::move(got));
    } else if (op == 1 && !owners.empty()) {  // free a whole owner
      const size_t i = rng() % owners.size();
      pool.free(owners[i]);
      for (int32_t b : owners[i]) ASSERT_GE(--held[b], 0);
      owners.erase(owners.begin() + long(i));
    } else if ((op == 2 || op == 3) && !owners.empty()) {
      const auto& o = owners[rng() % owners.size()];
      if (o.empty()) continue;
      const int32_t b = o[rng() % o.size()];
      if (op == 2) {  // share: a second owner
        pool.share(b);
        ++held[b];
        owners.push_back({b});
      } else {  // register a prefix hash for a used block
        pool.cache_block(b, next_hash);
        hashes.push_back(next_hash++);
      }
    } else if (op == 4 && !hashes.empty()) {  // prefix hit (may revive an evictable block)
      if (auto b = pool.lookup(hashes[rng() % hashes.size()])) {
        ++held[*b];
        ++hits;
        owners.push_back({*b});
      }
    }
    if (step % 97 == 0) ASSERT_NO_THROW(pool.check_invariants()) << "step " << step;
    if (step % 499 == 0) {
      int64_t used = 0;
      for (int32_t b = 1; b < pool.num_blocks(); ++b) {
        ASSERT_EQ(pool.ref_count(b), held[b]) << "block " << b;
        used += held[b] > 0;
      }
      ASSERT_EQ(pool.num_used(), used);
      ASSERT_EQ(pool.num_free() + pool.num_used(), pool.num_usable());
    }
  }
  // The sequence exercised every path.
  EXPECT_GT(allocations, 1000);
  EXPECT_GT(hits, 100);
  EXPECT_GT(evictions, 10);
  EXPECT_GT(pool.take_blocks_to_zero().size(), 1000u);
  for (const auto& o : owners) pool.free(o);
  pool.check_invariants();
  EXPECT_EQ(pool.num_free(), pool.num_usable());
}

TEST(BlockPool, NoBlockHandedOutTwiceAndBadFreesChangeNothing) {
  BlockPool pool(9);
  auto a = pool.allocate(8);
  std::set<int32_t> ids(a.begin(), a.end());
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_EQ(ids.count(BlockPool::kNullBlock), 0u);
  EXPECT_THROW(pool.allocate(1), OutOfMemory);
  const std::vector<int32_t> twice = {a[0], a[0]};
  EXPECT_THROW(pool.free(twice), InvalidArgument);  // ref is 1
  EXPECT_EQ(pool.ref_count(a[0]), 1);
  const std::vector<int32_t> null_block = {0};
  EXPECT_THROW(pool.free(null_block), InvalidArgument);
  pool.check_invariants();
}

TEST(BlockPool, LruEvictionOfCachedBlocks) {
  BlockPool pool(4);  // 3 usable
  auto a = pool.allocate(3);
  pool.cache_block(a[0], 100);
  pool.cache_block(a[1], 200);
  pool.free(std::vector<int32_t>{a[0]});  // oldest free
  pool.free(std::vector<int32_t>{a[1]});
  pool.free(std::vector<int32_t>{a[2]});
  EXPECT_EQ(pool.num_cached(), 2u);
  auto b = pool.allocate(1);  // evicts the least recently freed: a[0]
  EXPECT_EQ(b[0], a[0]);
  EXPECT_EQ(pool.lookup(100), std::nullopt);
  auto hit = pool.lookup(200);
  ASSERT_TRUE(hit);
  EXPECT_EQ(*hit, a[1]);
  EXPECT_EQ(pool.ref_count(a[1]), 1);
  EXPECT_EQ(pool.num_free(), 1);
  pool.check_invariants();
}

KvPlan small_plan(std::optional<int> window = std::nullopt, int64_t max_len = 4096,
                  std::optional<int> chunk = std::nullopt) {
  ModelSpec m;
  m.name = "tiny";
  m.max_position_embeddings = max_len;
  for (int i = 0; i < 2; ++i) {
    LayerSpec l = attn_layer(i, 4, 2, 16);
    l.sliding_window = window;
    l.attention_chunk_size = chunk;
    m.attention_layers.push_back(l);
  }
  KvPlanOptions o;
  o.block_size = 4;
  return plan_kv_cache(m, {}, o);
}

std::vector<int32_t> iota_tokens(int n, int start = 0) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = start + i;
  return t;
}

TEST(KvCacheManager, AppendAllocateFreeAndSlots) {
  KvCacheManager mgr(small_plan(), 33, {.enable_prefix_caching = false});
  EXPECT_EQ(mgr.add_request(1, iota_tokens(6)), 0);
  EXPECT_EQ(mgr.blocks(1, 0).size(), 2u);
  mgr.append_tokens(1, iota_tokens(3, 6));  // 9 tokens: 3 blocks
  EXPECT_EQ(mgr.blocks(1, 0).size(), 3u);
  const auto& bl = mgr.blocks(1, 0);
  const auto slots = mgr.slot_mapping(1, 0, 7, 2);
  EXPECT_EQ(slots[0], int64_t(bl[1]) * 4 + 3);
  EXPECT_EQ(slots[1], int64_t(bl[2]) * 4 + 0);
  EXPECT_THROW(mgr.slot_mapping(1, 0, 8, 2), InvalidArgument);
  std::vector<int32_t> table(8, -7);
  const RequestId ids[] = {1};
  mgr.fill_block_tables(ids, 0, table.data(), 8);
  EXPECT_EQ(table[2], bl[2]);
  EXPECT_EQ(table[3], BlockPool::kNullBlock);
  mgr.free_request(1);
  EXPECT_EQ(mgr.pool().num_free(), 32);
  EXPECT_FALSE(mgr.has_request(1));
}

TEST(KvCacheManager, MalformedRequestsLeavePoolUnchanged) {
  KvCacheManager mgr(small_plan(std::nullopt, 64), 9);  // 8 usable blocks of 4 tokens
  mgr.add_request(1, iota_tokens(10));                  // 3 blocks
  const int64_t free_before = mgr.pool().num_free();
  const auto blocks_before = mgr.blocks(1, 0);
  // Beyond max_model_len.
  try {
    mgr.add_request(2, iota_tokens(65, 1000));
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("exceed max_model_len 64"));
  }
  // Beyond the pool's capacity: clear error, nothing allocated.
  try {
    mgr.add_request(3, iota_tokens(40, 2000));
    FAIL();
  } catch (const OutOfMemory& e) {
    EXPECT_THAT(e.what(), HasSubstr("needs 10 new KV blocks"));
  }
  EXPECT_THROW(mgr.append_tokens(1, iota_tokens(30, 5000)), OutOfMemory);
  EXPECT_THROW(mgr.append_tokens(1, iota_tokens(60, 5000)), InvalidArgument);
  EXPECT_THROW(mgr.add_request(1, iota_tokens(2)), InvalidArgument);  // duplicate
  EXPECT_EQ(mgr.pool().num_free(), free_before);
  EXPECT_EQ(mgr.blocks(1, 0), blocks_before);
  EXPECT_EQ(mgr.num_tokens(1), 10);
  EXPECT_FALSE(mgr.has_request(2));
  EXPECT_FALSE(mgr.has_request(3));
  mgr.pool().check_invariants();
}

TEST(KvCacheManager, PrefixCacheReusesFullBlocks) {
  KvCacheManager mgr(small_plan(), 33);
  const auto prompt = iota_tokens(10);
  EXPECT_EQ(mgr.add_request(1, prompt), 0);
  // Nothing is reused before its K/V are written.
  EXPECT_EQ(mgr.add_request(5, prompt), 0);
  mgr.free_request(5);
  mgr.mark_computed(1, 10);
  EXPECT_THROW(mgr.mark_computed(1, 11), InvalidArgument);
  // Same 10-token prompt: the 2 full blocks are reused (at least one token stays to compute).
  EXPECT_EQ(mgr.add_request(2, prompt), 8);
  EXPECT_EQ(mgr.blocks(2, 0)[0], mgr.blocks(1, 0)[0]);
  EXPECT_EQ(mgr.blocks(2, 0)[1], mgr.blocks(1, 0)[1]);
  EXPECT_NE(mgr.blocks(2, 0)[2], mgr.blocks(1, 0)[2]);
  EXPECT_EQ(mgr.pool().ref_count(mgr.blocks(1, 0)[0]), 2);
  const auto slots = mgr.slot_mapping(2, 0, 0, 10);
  EXPECT_EQ(slots[7], -1);  // cached: the write skips it
  EXPECT_NE(slots[8], -1);
  mgr.mark_computed(2, 10);
  mgr.free_request(1);
  mgr.free_request(2);
  // Freed but still cached: a third request hits them again.
  EXPECT_EQ(mgr.add_request(3, prompt), 8);
  // A different first block breaks the chain.
  auto other = prompt;
  other[0] = 999;
  EXPECT_EQ(mgr.add_request(4, other), 0);
  mgr.pool().check_invariants();
}

TEST(KvCacheManager, SlidingWindowReleasesBlocksOutOfTheWindow) {
  KvCacheManager mgr(small_plan(6), 33);  // window 6 tokens, block 4
  mgr.add_request(1, iota_tokens(12));
  EXPECT_EQ(mgr.blocks(1, 0).size(), 3u);
  const int64_t free_after_prompt = mgr.pool().num_free();
  // Next query at position 12 sees positions 7..12: block 0 (0-3) is out, block 1 (4-7) is not.
  mgr.append_tokens(1, iota_tokens(1, 12));
  const auto& bl = mgr.blocks(1, 0);
  ASSERT_EQ(bl.size(), 4u);
  EXPECT_EQ(bl[0], BlockPool::kNullBlock);
  EXPECT_NE(bl[1], BlockPool::kNullBlock);
  EXPECT_EQ(mgr.pool().num_free(), free_after_prompt + 1 - 1);  // one released, one new
  EXPECT_EQ(mgr.slot_mapping(1, 0, 0, 1)[0], -1);
  EXPECT_EQ(mgr.block_table(1, 0)[0], BlockPool::kNullBlock);
  // Decode many tokens: the request never holds more than ceil((w-1)/b)+1 live blocks + 1.
  for (int t = 13; t < 200; ++t) {
    mgr.append_tokens(1, iota_tokens(1, t));
    int live = 0;
    for (int32_t b : mgr.blocks(1, 0)) live += b != BlockPool::kNullBlock;
    ASSERT_LE(live, 4);
  }
  mgr.free_request(1);
  EXPECT_EQ(mgr.pool().num_free(), mgr.pool().num_usable());
}

// The most blocks one request of `total` tokens holds (and every block back in the pool after
// it), its tokens arriving in random appends of up to `chunk`, mostly full ones, so that they
// reach every alignment to the blocks.
int64_t most_blocks_held(const KvPlan& plan, int total, int chunk, std::mt19937& rng) {
  KvCacheManager mgr(plan, 64, {.enable_prefix_caching = false});
  int64_t most = 0;
  for (int n0 = 0; n0 < total;) {
    const int n = std::min<int>(total - n0, rng() % 3 ? chunk : 1 + int(rng() % chunk));
    if (n0 == 0)
      mgr.add_request(1, iota_tokens(n));
    else
      mgr.append_tokens(1, iota_tokens(n, n0));
    n0 += n;
    most = std::max(most, mgr.pool().num_used());
  }
  mgr.free_request(1);
  EXPECT_EQ(mgr.pool().num_free(), mgr.pool().num_usable());
  return most;
}

// Chunked local attention: a query sees only its own attention chunk, so the blocks wholly
// before the chunk of a step's first query go back to the pool.
TEST(KvCacheManager, ChunkedLocalReleasesBlocksOfPastChunks) {
  const KvPlan plan = small_plan(std::nullopt, 4096, 8);  // chunks of 8 tokens, block 4
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].kind, KvSpecKind::kChunkedLocal);
  EXPECT_EQ(plan.groups[0].blocks_for_tokens(100, 0), 3);  // ceil((8 - 1) / 4) + 1
  KvCacheManager mgr(plan, 33, {.enable_prefix_caching = false});
  mgr.add_request(1, iota_tokens(15));  // positions 0..14: blocks 0-3
  EXPECT_EQ(mgr.blocks(1, 0).size(), 4u);
  // The next query (position 15) is in chunk 8..15: blocks 0 and 1 (positions 0-7) go.
  mgr.append_tokens(1, iota_tokens(1, 15));
  const auto& bl = mgr.blocks(1, 0);
  ASSERT_EQ(bl.size(), 4u);
  EXPECT_EQ(bl[0], BlockPool::kNullBlock);
  EXPECT_EQ(bl[1], BlockPool::kNullBlock);
  EXPECT_NE(bl[2], BlockPool::kNullBlock);
  // Position 16 starts a chunk: it keeps nothing of 8..15 but the block it writes into.
  mgr.append_tokens(1, iota_tokens(1, 16));
  int live = 0;
  for (int32_t b : mgr.blocks(1, 0)) live += b != BlockPool::kNullBlock;
  EXPECT_EQ(live, 1);
  // Random appends never hold more than peak_blocks.
  std::mt19937 rng(11);
  for (int chunk : {1, 3, 4, 7, 16})
    EXPECT_LE(most_blocks_held(plan, 600, chunk, rng), plan.peak_blocks(600, chunk))
        << "chunk " << chunk;
  mgr.free_request(1);
  EXPECT_EQ(mgr.pool().num_free(), mgr.pool().num_usable());
}

// A request whose tokens arrive in chunks (chunked prefill, then decode) never holds more blocks
// than KvPlan::peak_blocks says, and at some point exactly that many: the bound the serving loop
// and `plan` size the cache by.
TEST(KvCacheManager, ChunkedAppendsStayWithinThePeak) {
  std::mt19937 rng(7);
  for (int window : {5, 8, 13}) {
    const KvPlan plan = small_plan(window);  // block 4
    for (int chunk : {1, 3, 4, 7, 16}) {
      const int64_t peak = plan.peak_blocks(600, chunk);
      ASSERT_LT(peak, plan.peak_blocks(600, 600)) << window << " " << chunk;
      EXPECT_EQ(most_blocks_held(plan, 600, chunk, rng), peak)
          << "window " << window << " chunk " << chunk;
    }
  }
}

// Zeroing: a block freed with stale bytes and reused reads as zeros only where zeroing is on.
void zeroing_case(bool mixed_precision, bool expect_zero) {
  ModelSpec m;
  m.name = "zero";
  m.max_position_embeddings = 64;
  for (int i = 0; i < 2; ++i) {
    LayerSpec l = attn_layer(i, 2, 2, 16);
    if (mixed_precision && i == 1) {
      l.kv_cache_dtype = KvCacheDType::kFp8E4M3;
      l.sliding_window = 8;
    }
    m.attention_layers.push_back(l);
  }
  KvPlanOptions o;
  o.block_size = 4;
  const KvPlan plan = plan_kv_cache(m, {}, o);
  ASSERT_EQ(plan.needs_zeroing, expect_zero);
  KvCacheManager mgr(plan, 2 + int64_t(plan.groups.size()) - 1);  // exactly one block per group
  KvCacheStorage storage(plan, mgr.pool().num_blocks());
  HostBlockZeroer zeroer(storage);
  mgr.add_request(1, iota_tokens(3));
  mgr.pool().zero_pending(zeroer);
  const int32_t b = mgr.blocks(1, 0)[0];
  // Stale bytes in every tensor of that block.
  for (int j = 0; j < storage.num_tensors(); ++j)
    std::memset(static_cast<uint8_t*>(storage.tensor(j)) + b * plan.page_bytes, 0xff,
                size_t(plan.page_bytes));
  mgr.free_request(1);
  mgr.add_request(2, iota_tokens(3, 100));
  const int32_t again =
      mgr.blocks(2, 0)[0] == b ? b : mgr.blocks(2, int(plan.groups.size()) - 1)[0];
  ASSERT_EQ(again, b);  // the only free blocks are reused
  mgr.pool().zero_pending(zeroer);
  const auto* page = static_cast<const uint8_t*>(storage.tensor(0)) + b * plan.page_bytes;
  bool all_zero = true;
  for (int64_t i = 0; i < plan.page_bytes; ++i) all_zero &= page[i] == 0;
  EXPECT_EQ(all_zero, expect_zero);
}

TEST(KvCacheManager, ZeroingOnForMixedPrecisionOffForUniform) {
  zeroing_case(/*mixed_precision=*/true, /*expect_zero=*/true);
  zeroing_case(/*mixed_precision=*/false, /*expect_zero=*/false);
}

TEST(KvCacheManager, HybridStateGetsOneZeroedBlockPerRequest) {
  const ModelSpec m = kvtest::nemotron_nano();
  const KvPlan plan = plan_kv_cache(m, {});
  KvCacheManager mgr(plan, 12);
  EXPECT_EQ(mgr.blocks_needed(100), 1 + 4);  // one attention block of 2096 + 4 mamba groups
  mgr.add_request(1, iota_tokens(100));
  for (size_t g = 0; g < plan.groups.size(); ++g) EXPECT_EQ(mgr.blocks(1, int(g)).size(), 1u);
  EXPECT_EQ(mgr.pool().take_blocks_to_zero().size(), 5u);
  mgr.append_tokens(1, iota_tokens(1996, 100));  // 2096: still one block
  EXPECT_EQ(mgr.pool().num_used(), 5);
  mgr.append_tokens(1, iota_tokens(1, 2096));  // the attention group grows, state does not
  EXPECT_EQ(mgr.pool().num_used(), 6);
  EXPECT_THROW(mgr.slot_mapping(1, 1, 0, 1), InvalidArgument);  // state group
}

// A model of serving over the manager: requests arrive (prompts sharing prefixes), grow in
// chunks, fail for memory and leave, at random. Each step writes its new positions through
// slot_mapping into a shadow cache that stores, per slot, a hash of the token prefix up to that
// position (what K/V at that position depend on), then marks them computed. After every step
// each live request's block tables must read back the right hash at every position its next
// queries can see (prefix-cached blocks included), fresh blocks must have been zeroed where the
// plan zeroes, and the pool must count exactly the blocks live requests hold.
void random_serving(const KvPlan& plan, int64_t num_blocks, bool prefix_caching, uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + ", block " +
               std::to_string(plan.groups[0].manager_block_size));
  std::mt19937 rng(seed);
  KvCacheManager mgr(plan, num_blocks, {.enable_prefix_caching = prefix_caching});
  const size_t G = plan.groups.size();
  constexpr uint64_t kUnwritten = 0x5555, kZeroed = 0;
  std::vector<std::vector<uint64_t>> shadow(G);  // [group][kernel slot]
  for (size_t g = 0; g < G; ++g)
    shadow[g].assign(size_t(num_blocks * plan.groups[g].ratio() * plan.groups[g].kernel_block_size),
                     kUnwritten);
  auto prefix_hash = [](uint64_t h, int32_t token) {
    return (h ^ uint64_t(uint32_t(token))) * 0x100000001B3ull + 1;
  };
  struct Live {
    std::vector<int32_t> tokens;
    std::vector<uint64_t> hashes;  // after each position
    int64_t first_query = 0;       // the latest step's first position
  };
  std::map<RequestId, Live> live;
  const std::vector<std::vector<int32_t>> stems = {std::vector<int32_t>(37, 7), {1, 2, 3, 4, 5}};
  RequestId next_id = 1;
  int64_t hits = 0, ooms = 0;
  // Zero what the pool hands out fresh (the serving loop's zero_pending), in every group.
  auto zero_fresh = [&] {
    for (int32_t b : mgr.pool().take_blocks_to_zero())
      for (size_t g = 0; g < G; ++g) {
        const int kb = plan.groups[g].kernel_block_size, per = plan.groups[g].ratio() * kb;
        std::fill_n(shadow[g].begin() + int64_t(b) * per, per, kZeroed);
      }
  };
  // Writes positions [start, end) of a request, then marks them computed.
  auto write = [&](RequestId id, Live& r, int64_t start, int64_t end) {
    zero_fresh();
    for (size_t g = 0; g < G; ++g) {
      if (plan.groups[g].kind == KvSpecKind::kState) continue;
      const auto slots = mgr.slot_mapping(id, int(g), start, end - start);
      for (int64_t p = start; p < end; ++p)
        if (slots[size_t(p - start)] >= 0)
          shadow[g].at(size_t(slots[size_t(p - start)])) = r.hashes[size_t(p)];
    }
    mgr.mark_computed(id, end);
    r.first_query = start;
  };
  for (int step = 0; step < 3000; ++step) {
    const int op = int(rng() % 10);
    if (op < 3 || live.empty()) {  // a new request
      Live r;
      const int64_t len = 1 + rng() % 60;
      const auto& stem = stems[rng() % stems.size()];
      const size_t shared = rng() % (stem.size() + 1);  // a prefix other requests may share
      for (int64_t i = 0; i < len; ++i)
        r.tokens.push_back(size_t(i) < shared ? stem[size_t(i)] : int32_t(rng() % 50));
      uint64_t h = 0;
      for (int32_t t : r.tokens) r.hashes.push_back(h = prefix_hash(h, t));
      const RequestId id = next_id++;
      const int64_t used = mgr.pool().num_used();
      int64_t cached = 0;
      try {
        cached = mgr.add_request(id, r.tokens);
      } catch (const OutOfMemory&) {
        ++ooms;
        ASSERT_EQ(mgr.pool().num_used(), used);
        ASSERT_FALSE(mgr.has_request(id));
        continue;
      }
      ASSERT_LT(cached, len) << "at least one prompt token is computed";
      hits += cached;
      write(id, r, cached, len);
      live[id] = std::move(r);
    } else if (op < 8) {  // the next chunk of a live request
      auto it = std::next(live.begin(), long(rng() % live.size()));
      Live& r = it->second;
      const int64_t n = rng() % 4 ? 1 : 1 + rng() % 20, start = int64_t(r.tokens.size());
      if (start + n > plan.max_model_len) continue;
      std::vector<int32_t> add;
      for (int64_t i = 0; i < n; ++i) add.push_back(int32_t(rng() % 50));
      const int64_t used = mgr.pool().num_used();
      const auto before = mgr.blocks(it->first, 0);
      try {
        mgr.append_tokens(it->first, add);
      } catch (const OutOfMemory&) {
        ++ooms;
        ASSERT_EQ(mgr.pool().num_used(), used);
        ASSERT_EQ(mgr.blocks(it->first, 0), before);
        continue;
      }
      uint64_t h = r.hashes.back();
      for (int32_t t : add) {
        r.tokens.push_back(t);
        r.hashes.push_back(h = prefix_hash(h, t));
      }
      write(it->first, r, start, start + n);
    } else {  // a request leaves
      auto it = std::next(live.begin(), long(rng() % live.size()));
      mgr.free_request(it->first);
      live.erase(it);
    }
    mgr.pool().check_invariants();
    // Every position a live request's next queries see reads back its own prefix hash.
    std::set<int32_t> held;
    for (const auto& [id, r] : live) {
      const int64_t len = int64_t(r.tokens.size());
      for (size_t g = 0; g < G; ++g) {
        const KvGroupPlan& gp = plan.groups[g];
        for (int32_t b : mgr.blocks(id, int(g)))
          if (b != BlockPool::kNullBlock) held.insert(b);
        if (gp.kind == KvSpecKind::kState) continue;
        int64_t from = 0;
        if (gp.kind == KvSpecKind::kSlidingWindow)
          from = std::max<int64_t>(0, r.first_query - *gp.spec.sliding_window + 1);
        if (gp.kind == KvSpecKind::kChunkedLocal)
          from = r.first_query / *gp.spec.attention_chunk_size * *gp.spec.attention_chunk_size;
        const auto table = mgr.block_table(id, int(g));
        const int kb = gp.kernel_block_size;
        for (int64_t p = from; p < len; ++p) {
          const int32_t b = table.at(size_t(p / kb));
          ASSERT_NE(b, BlockPool::kNullBlock) << "request " << id << " group " << g << " pos " << p;
          ASSERT_EQ(shadow[g].at(size_t(int64_t(b) * kb + p % kb)), r.hashes[size_t(p)])
              << "request " << id << " group " << g << " position " << p << " of " << len;
        }
        // The unwritten tail of the last block: zeroed where the plan zeroes.
        if (plan.needs_zeroing && len % kb)
          for (int64_t p = len; p < (len / kb + 1) * kb; ++p)
            ASSERT_EQ(shadow[g].at(size_t(int64_t(table.at(size_t(len / kb))) * kb + p % kb)),
                      kZeroed)
                << "request " << id << " group " << g << " position " << p;
      }
    }
    ASSERT_EQ(mgr.pool().num_used(), int64_t(held.size()));
  }
  if (prefix_caching) EXPECT_GT(hits, 0) << "the prefix cache was never hit";
  EXPECT_GT(ooms, 0) << "memory never ran out: the pool is too large to test failures";
  for (const auto& [id, r] : live) mgr.free_request(id);
  EXPECT_EQ(mgr.pool().num_free(), mgr.pool().num_usable());
}

TEST(KvCacheManager, RandomServingReadsBackEveryVisiblePosition) {
  for (int block : {1, 4, 16}) {
    // Full attention with the prefix cache.
    ModelSpec full;
    full.name = "full";
    full.max_position_embeddings = 400;
    for (int i = 0; i < 2; ++i) full.attention_layers.push_back(attn_layer(i, 4, 2, 16));
    KvPlanOptions o;
    o.block_size = block;
    random_serving(plan_kv_cache(full, {}, o), 600 / block + 8, true, 1 + block);
    // Full + sliding window + chunked local + an fp8 layer (mixed precision: zeroing on).
    ModelSpec mixed = full;
    mixed.name = "mixed";
    LayerSpec sliding = attn_layer(2, 4, 2, 16);
    sliding.sliding_window = 5 + block;
    LayerSpec chunked = attn_layer(3, 4, 2, 16);
    chunked.attention_chunk_size = 3 * block + 2;
    LayerSpec fp8 = attn_layer(4, 4, 2, 16, KvCacheDType::kFp8E4M3);
    mixed.attention_layers.push_back(sliding);
    mixed.attention_layers.push_back(chunked);
    mixed.attention_layers.push_back(fp8);
    const KvPlan plan = plan_kv_cache(mixed, {}, o);
    ASSERT_TRUE(plan.needs_zeroing);
    random_serving(plan, 1600 / block + 16, false, 100 + block);
  }
  // A hybrid model: a mamba state page forces manager blocks of several kernel blocks.
  ModelSpec hybrid;
  hybrid.name = "hybrid";
  hybrid.max_position_embeddings = 400;
  for (int i = 0; i < 2; ++i) hybrid.attention_layers.push_back(attn_layer(i, 4, 2, 16));
  StateLayerSpec state;
  state.layer_index = 2;
  state.kind = StateKind::kMamba;
  state.state_bytes_per_request = 5000;
  hybrid.state_layers.push_back(state);
  const Capabilities k16 = kvtest::caps("K16", {BlockSizeEntry{16, false}});
  const KvPlan plan = plan_kv_cache(hybrid, kvtest::same_backend(hybrid, k16));
  ASSERT_GT(plan.groups[0].ratio(), 1);
  random_serving(plan, 40, false, 7);  // no prefix cache beside a state group
}

TEST(KvCacheManager, CrossAttentionSizedByEncoderLengthNoGrowth) {
  ModelSpec m;
  m.name = "t5-like";
  m.is_encoder_decoder = true;
  m.max_position_embeddings = 512;
  LayerSpec enc = attn_layer(0, 8, 8, 64);
  enc.attn_type = AttentionType::kEncoder;
  LayerSpec self = attn_layer(1, 8, 8, 64);
  LayerSpec cross = attn_layer(2, 8, 8, 64);
  cross.attn_type = AttentionType::kCross;
  m.attention_layers = {enc, self, cross};
  KvPlanOptions o;
  o.max_encoder_len = 100;
  const KvPlan plan = plan_kv_cache(m, {}, o);
  ASSERT_EQ(plan.groups.size(), 2u);  // the encoder layer keeps no cache
  EXPECT_EQ(plan.layer(0).kind, KvSpecKind::kNoCache);
  const int cross_group = plan.group_of_layer(2).group_id;
  KvCacheManager mgr(plan, 64);
  EXPECT_THROW(mgr.add_request(1, iota_tokens(3)), InvalidArgument);  // needs an encoder length
  EXPECT_THROW(mgr.add_request(1, iota_tokens(3), 101), InvalidArgument);
  mgr.add_request(1, iota_tokens(3), 40);
  EXPECT_EQ(mgr.blocks(1, cross_group).size(), 3u);  // ceil(40 / 16)
  mgr.append_tokens(1, iota_tokens(50, 3));
  EXPECT_EQ(mgr.blocks(1, cross_group).size(), 3u);  // no growth
  EXPECT_EQ(mgr.slot_mapping(1, cross_group, 39, 1)[0],
            int64_t(mgr.blocks(1, cross_group)[2]) * 16 + 7);
  EXPECT_THROW(mgr.slot_mapping(1, cross_group, 40, 1), InvalidArgument);
}

}  // namespace
}  // namespace attnkit
