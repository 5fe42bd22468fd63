// Host KV storage, views (incl. KV sharing with scales), and the CPU KV write for every dtype.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../far_offsets.hpp"
#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/numeric.hpp"
#include "kv_test_util.hpp"

namespace attnkit {
namespace {

using kvtest::attn_layer;
using ::testing::HasSubstr;

struct Fixture {
  KvPlan plan;
  std::unique_ptr<KvCacheStorage> storage;
};

Fixture make(KvCacheDType kv, int kv_heads, int head, int block, int64_t blocks,
             ScaleGranularity g = ScaleGranularity::kNone, int layers = 1) {
  ModelSpec m;
  m.name = "t";
  m.max_position_embeddings = 1 << 16;
  for (int i = 0; i < layers; ++i) {
    LayerSpec l = attn_layer(i, kv_heads * 2, kv_heads, head, kv, DType::kFloat32);
    l.kv_scale_granularity = g;
    m.attention_layers.push_back(l);
  }
  KvPlanOptions o;
  o.block_size = block;
  Fixture f;
  f.plan = plan_kv_cache(m, {}, o);
  f.storage = std::make_unique<KvCacheStorage>(f.plan, blocks);
  return f;
}

KvWriteArgs args_for(const KvCacheView& view, const std::vector<float>& k,
                     const std::vector<float>& v, const std::vector<int64_t>& slots) {
  KvWriteArgs a;
  a.k = k.data();
  a.v = view.v ? v.data() : nullptr;
  a.dtype = DType::kFloat32;
  a.num_tokens = int(slots.size());
  a.k_stride_head = view.head_size;
  a.k_stride_token = int64_t(view.num_kv_heads) * view.head_size;
  a.v_stride_head = view.head_size_v;
  a.v_stride_token = int64_t(view.num_kv_heads) * view.head_size_v;
  a.slot_mapping = slots.data();
  a.cache = view;
  return a;
}

// Round trip through every storage format: error within the format's precision.
TEST(KvWrite, RoundTripEveryDtype) {
  struct Case {
    KvCacheDType kv;
    ScaleGranularity g;
    double rel_tol;  // of the vector's max magnitude
  };
  const Case cases[] = {
      {KvCacheDType::kAuto, ScaleGranularity::kNone, 0.0},  // fp32 storage: exact
      {KvCacheDType::kFloat16, ScaleGranularity::kNone, 1.0 / 1024},
      {KvCacheDType::kBFloat16, ScaleGranularity::kNone, 1.0 / 128},
      {KvCacheDType::kFp8E4M3, ScaleGranularity::kPerTensor, 1.0 / 16},
      {KvCacheDType::kFp8E4M3, ScaleGranularity::kPerHead, 1.0 / 16},
      {KvCacheDType::kFp8E5M2, ScaleGranularity::kPerTensor, 1.0 / 8},
      {KvCacheDType::kNvfp4, ScaleGranularity::kNone, 0.5},  // e2m1: 1 mantissa bit
  };
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.f, 2.f);
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} {}", to_string(c.kv), to_string(c.g)));
    Fixture f = make(c.kv, 2, 64, 8, 6, c.g);
    if (c.g == ScaleGranularity::kPerTensor) {
      const float ks[] = {0.05f}, vs[] = {0.1f};
      f.storage->set_scales(0, ks, vs);
    } else if (c.g == ScaleGranularity::kPerHead) {
      const float ks[] = {0.05f, 0.2f}, vs[] = {0.1f, 0.03f};
      f.storage->set_scales(0, ks, vs);
    }
    const KvCacheView view = f.storage->view(0);
    const int n = 11;
    std::vector<float> k(size_t(n * 2 * 64)), v(k.size());
    for (auto& x : k) x = dist(rng);
    for (auto& x : v) x = dist(rng);
    k[5] = 0.f;  // zeros survive
    std::vector<int64_t> slots;
    for (int t = 0; t < n; ++t) slots.push_back(t == 3 ? -1 : 8 + (t * 7) % 40);
    write_kv_cpu(args_for(view, k, v, slots));
    std::vector<float> out(64);
    for (int t = 0; t < n; ++t) {
      if (slots[size_t(t)] < 0) continue;
      for (int h = 0; h < 2; ++h)
        for (int pass = 0; pass < 2; ++pass) {
          const auto& src = pass ? v : k;
          read_kv_cpu(view, slots[size_t(t)], h, pass == 1, out.data());
          // nvfp4 scales per 16 elements: compare against that group's amax.
          for (int e = 0; e < 64; ++e) {
            const float x = src[size_t((t * 2 + h) * 64 + e)];
            float amax = 0.f;
            const int g0 = c.kv == KvCacheDType::kNvfp4 ? e / 16 * 16 : 0;
            const int g1 = c.kv == KvCacheDType::kNvfp4 ? g0 + 16 : 64;
            for (int i = g0; i < g1; ++i)
              amax = std::max(amax, std::fabs(src[size_t((t * 2 + h) * 64 + i)]));
            const double tol =
                c.rel_tol * std::max(std::fabs(x),
                                     c.kv == KvCacheDType::kNvfp4 ? amax / 6.f : std::fabs(x)) +
                (c.g == ScaleGranularity::kNone ? 1e-6 : 1e-4);
            ASSERT_NEAR(out[size_t(e)], x, tol) << "t " << t << " h " << h << " e " << e;
          }
        }
    }
    // The skipped token's slot is untouched (still zero from allocation).
    read_kv_cpu(view, 8 + (3 * 7) % 40, 0, false, out.data());
    for (float x : out) EXPECT_EQ(x, 0.f);
  }
}

TEST(KvWrite, Fp8SaturatesAndAppliesScale) {
  Fixture f = make(KvCacheDType::kFp8E4M3, 1, 16, 4, 3);
  const float ks[] = {0.5f}, vs[] = {2.f};
  f.storage->set_scales(0, ks, vs);
  const KvCacheView view = f.storage->view(0);
  std::vector<float> k(16, 1000.f), v(16, -1e9f);
  k[1] = 3.f;
  write_kv_cpu(args_for(view, k, v, {5}));
  const auto* kb =
      static_cast<const uint8_t*>(view.k) + 1 * view.stride_block + 1 * view.stride_token;
  EXPECT_EQ(fp8_e4m3_to_float(kb[0]), 448.f);  // 1000 / 0.5 = 2000 saturates to 448
  EXPECT_EQ(fp8_e4m3_to_float(kb[1]), 6.f);    // 3 / 0.5
  std::vector<float> out(16);
  read_kv_cpu(view, 5, 0, true, out.data());
  EXPECT_EQ(out[0], -448.f * 2.f);  // saturated, never inf / NaN
}

TEST(KvWrite, ValidatesSlotsBeforeWriting) {
  Fixture f = make(KvCacheDType::kBFloat16, 1, 16, 4, 3);
  const KvCacheView view = f.storage->view(0);  // 3 blocks x 4 = 12 slots
  std::vector<float> k(32, 1.f), v(32, 1.f);
  try {
    write_kv_cpu(args_for(view, k, v, {2, 12}));
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("slot_mapping[1] = 12"));
  }
  std::vector<float> out(16);
  read_kv_cpu(view, 2, 0, false, out.data());
  EXPECT_EQ(out[0], 0.f);  // the valid first token was not written either
  EXPECT_THROW(write_kv_cpu(args_for(view, k, v, {-2})), InvalidArgument);
  KvWriteArgs no_v = args_for(view, k, v, {1});
  no_v.v = nullptr;
  EXPECT_THROW(write_kv_cpu(no_v), InvalidArgument);
}

TEST(KvStorage, ViewsFollowCanonicalLayoutAndSplitBlocks) {
  // Pinned 64 with a kernel that takes only 16: 4 kernel blocks per manager block.
  ModelSpec m;
  m.name = "split";
  m.max_position_embeddings = 1024;
  m.attention_layers = {attn_layer(0, 4, 2, 32), attn_layer(1, 4, 2, 32)};
  const Capabilities c = kvtest::caps("K16", {BlockSizeEntry::exact(16)});
  KvPlanOptions o;
  o.block_size = 64;
  const KvPlan plan = plan_kv_cache(m, kvtest::same_backend(m, c), o);
  ASSERT_EQ(plan.groups[0].ratio(), 4);
  KvCacheStorage s(plan, 5);
  const KvCacheView v0 = s.view(0);
  EXPECT_EQ(v0.num_blocks, 20);
  EXPECT_EQ(v0.block_size, 16);
  EXPECT_EQ(v0.stride_token, 64);               // 32 bf16
  EXPECT_EQ(v0.stride_head, 16 * 64);           // [H, kb, D]
  EXPECT_EQ(v0.stride_block, 2 * 2 * 16 * 64);  // K and V of one kernel block
  EXPECT_EQ(static_cast<uint8_t*>(v0.v) - static_cast<uint8_t*>(v0.k), 2 * 16 * 64);
  EXPECT_NE(s.view(1).k, v0.k);  // second layer: second tensor

  // Writing through manager slots lands in the expanded kernel block table.
  KvCacheManager mgr(plan, 5, {.enable_prefix_caching = false});
  std::vector<int32_t> toks(70);
  mgr.add_request(1, toks);
  const auto table = mgr.block_table(1, 0);
  ASSERT_EQ(table.size(), 8u);
  const auto slots = mgr.slot_mapping(1, 0, 0, 70);
  std::vector<float> k(70 * 2 * 32), v(k.size());
  for (size_t i = 0; i < k.size(); ++i) k[i] = float(i % 97), v[i] = -float(i % 89);
  KvWriteArgs a = args_for(v0, k, v, slots);
  write_kv_cpu(a);
  std::vector<float> out(32);
  for (int pos : {0, 15, 16, 63, 64, 69}) {
    const int64_t slot = int64_t(table[size_t(pos / 16)]) * 16 + pos % 16;
    read_kv_cpu(v0, slot, 1, false, out.data());
    EXPECT_EQ(out[3], k[size_t((pos * 2 + 1) * 32 + 3)]) << pos;
  }
}

TEST(KvStorage, SharedLayerReadsTargetCacheAndScales) {
  ModelSpec m;
  m.name = "share";
  m.max_position_embeddings = 1024;
  for (int i = 0; i < 4; ++i)
    m.attention_layers.push_back(attn_layer(i, 4, 2, 32, KvCacheDType::kFp8E4M3));
  m.attention_layers[3].kv_sharing_target_layer = 1;
  const KvPlan plan = plan_kv_cache(m, {});
  KvCacheStorage s(plan, 4);
  const float ks[] = {0.25f}, vs[] = {4.f};
  s.set_scales(1, ks, vs);
  const KvCacheView target = s.view(1), reader = s.view(3);
  EXPECT_EQ(reader.k, target.k);
  EXPECT_EQ(reader.v, target.v);
  ASSERT_NE(reader.k_scale, nullptr);
  EXPECT_EQ(reader.k_scale, target.k_scale);
  EXPECT_EQ(reader.v_scale, target.v_scale);
  EXPECT_EQ(*reader.k_scale, 0.25f);
  EXPECT_EQ(*reader.v_scale, 4.f);
  EXPECT_EQ(s.k_scales(3), std::vector<float>{0.25f});
  EXPECT_NE(s.view(0).k_scale, target.k_scale);  // other layers keep their own (1.0)
  EXPECT_EQ(*s.view(0).k_scale, 1.f);
  EXPECT_THROW(s.set_scales(3, ks, vs), InvalidArgument);  // set the target's
  const float bad[] = {0.f};
  EXPECT_THROW(s.set_scales(1, bad, vs), InvalidArgument);
  EXPECT_EQ(plan.num_tensors, 3);  // the reader has no memory
}

// The VmFlags of the mapping that holds p (Linux), or "" where /proc/self/smaps cannot tell.
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(' ') > line.find('-'))
      inside = a >= lo && a < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

TEST(KvStorage, HostAllocatorGivesLargeCachesHugePages) {
  KvAllocator& a = host_kv_allocator();
  void* small = a.allocate(4096, 256);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 256, 0u);
  a.deallocate(small, 4096);
  // A size that is not a multiple of 2 MiB: the whole of it is usable.
  const size_t bytes = kHostHugePageBytes * 3 + 12345;
  auto* p = static_cast<unsigned char*>(a.allocate(bytes, 256));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHostHugePageBytes, 0u);
  a.fill_zero(p, bytes);
  p[0] = 1;
  p[bytes - 1] = 2;
  EXPECT_EQ(p[0] + p[bytes - 1], 3);
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(thp, modes);
  if (!modes.empty() && modes.find("[never]") == std::string::npos) {
    // madvise(MADV_HUGEPAGE) marks the mapping "hg", whether or not huge pages were free.
    const std::string flags = vm_flags_of(p + kHostHugePageBytes);
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  }
  EXPECT_THROW(a.allocate(bytes, 4096), InvalidArgument);  // beyond the allocator's alignment
  a.deallocate(p, bytes);
}

// Hands out fresh anonymous mappings, whose pages are zero until written and cost nothing until
// touched: a storage of several GiB of which a test uses a few blocks at the top.
class LazyAllocator final : public KvAllocator {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
    if (alignment > 4096) throw InvalidArgument("LazyAllocator aligns to 4096 bytes at most");
    void* p = far_offsets::map_lazily(bytes);
    if (!p) throw OutOfMemory("LazyAllocator: mmap failed");
    return p;
  }
  void deallocate(void* p, size_t bytes) override { far_offsets::unmap_lazily(p, bytes); }
  void fill_zero(void*, size_t) override {}  // only called on fresh (zero) allocations here
  void copy_from_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
};

// Blocks past the first 4 GiB of a tensor (reliability catalogue: offsets computed in 32 bits
// wrap there): the CPU KV write, the read back and the block zeroer address them, bf16 and fp8
// with per-head scales, and leave the neighbouring blocks as they were.
TEST(KvStorage, BlocksPastFourGiB) {
  ModelSpec m;
  m.name = "big";
  m.max_position_embeddings = 1 << 16;
  m.attention_layers = {attn_layer(0, 4, 2, 128),
                        attn_layer(1, 4, 2, 128, KvCacheDType::kFp8E4M3, DType::kFloat32)};
  m.attention_layers[1].kv_scale_granularity = ScaleGranularity::kPerHead;
  KvPlanOptions o;
  o.block_size = 16;
  const KvPlan plan = plan_kv_cache(m, {}, o);
  const int64_t top = far_offsets::kBaseBytes / plan.page_bytes + 8;  // first block past 4 GiB
  LazyAllocator lazy;
  KvCacheStorage s(plan, top + 4, lazy);
  ASSERT_GT(int64_t(s.tensor_bytes()), far_offsets::kBaseBytes);
  s.set_scales(1, std::vector<float>{0.5f, 0.25f}, std::vector<float>{2.f, 4.f});
  const std::vector<int32_t> ids = {int32_t(top), int32_t(top + 2)};
  for (int j = 0; j < s.num_tensors(); ++j)  // stale bytes in the blocks around them
    std::memset(static_cast<uint8_t*>(s.tensor(j)) + (top - 1) * plan.page_bytes, 0xff,
                size_t(5 * plan.page_bytes));
  for (int layer = 0; layer < 2; ++layer) {
    const KvCacheView v = s.view(layer);
    std::vector<int64_t> slots;
    for (int32_t b : ids)
      for (int i = 0; i < 16; i += 5) slots.push_back(int64_t(b) * v.block_size + i);
    std::vector<float> k(slots.size() * 2 * 128), val(k.size());
    for (size_t i = 0; i < k.size(); ++i) k[i] = float(i % 13) - 6.f, val[i] = float(i % 7) - 3.f;
    write_kv_cpu(args_for(v, k, val, slots));
    std::vector<float> got(128);
    for (size_t t = 0; t < slots.size(); ++t)
      for (int h = 0; h < 2; ++h)
        for (const bool value : {false, true}) {
          read_kv_cpu(v, slots[t], h, value, got.data());
          const float* want = (value ? val : k).data() + (t * 2 + size_t(h)) * 128;
          for (int e = 0; e < 128; ++e)
            ASSERT_EQ(got[size_t(e)], want[e]) << layer << " slot " << slots[t] << " head " << h;
        }
  }
  HostBlockZeroer zeroer(s);
  zeroer.zero_blocks(ids);
  for (int j = 0; j < s.num_tensors(); ++j) {
    const auto* base = static_cast<const uint8_t*>(s.tensor(j));
    for (int64_t b = top - 1; b < top + 4; ++b) {
      const bool zeroed = b == top || b == top + 2;
      int64_t wrong = 0;
      for (int64_t i = 0; i < plan.page_bytes; ++i)
        wrong += base[b * plan.page_bytes + i] != (zeroed ? 0 : 0xff);
      EXPECT_EQ(wrong, 0) << "tensor " << j << " block " << b;
    }
  }
}

TEST(KvStorage, MlaLatentSingleTensorAndNvfp4BlockScales) {
  ModelSpec m;
  m.name = "mla";
  m.max_position_embeddings = 1024;
  LayerSpec l = attn_layer(0, 16, 1, 576, KvCacheDType::kFp8E4M3);
  l.mla = MlaDims{512, 128, 64, 128, 0, false};
  l.head_size_v = 512;
  m.attention_layers = {l};
  const KvPlan plan = plan_kv_cache(m, {});
  KvCacheStorage s(plan, 3);
  const KvCacheView v = s.view(0);
  EXPECT_EQ(v.v, nullptr);
  EXPECT_EQ(v.num_kv_heads, 1);
  EXPECT_EQ(v.head_size, 576);
  EXPECT_EQ(v.head_size_v, 512);
  EXPECT_EQ(v.stride_token, 576);
  EXPECT_EQ(v.v_scale, nullptr);
  std::vector<float> k(576);
  for (int i = 0; i < 576; ++i) k[size_t(i)] = float(i % 7) - 3.f;
  write_kv_cpu(args_for(v, k, {}, {17}));
  std::vector<float> out(512);
  read_kv_cpu(v, 17, 0, /*value=*/true, out.data());  // V = head of the latent row
  EXPECT_EQ(out[12], k[12]);

  Fixture f = make(KvCacheDType::kNvfp4, 2, 32, 4, 3);
  const KvCacheView n = f.storage->view(0);
  ASSERT_NE(n.k_block_scales, nullptr);
  EXPECT_EQ(n.stride_token, 16);  // 32 nibbles
  EXPECT_EQ(n.sb_token, 2);       // 32 / 16 e4m3 scales
  EXPECT_EQ(n.sb_head, 4 * 2);
  EXPECT_EQ(n.v_block_scales - n.k_block_scales, 2 * 4 * 2);
  EXPECT_EQ(f.plan.page_bytes, 4 * 2 * 2 * (16 + 2));
  // All-zero input: guarded block scale, zeros back.
  std::vector<float> z(64, 0.f);
  write_kv_cpu(args_for(n, z, z, {3}));
  std::vector<float> o2(32, 1.f);
  read_kv_cpu(n, 3, 1, true, o2.data());
  for (float x : o2) EXPECT_EQ(x, 0.f);
}

// nvfp4 layers whose V rows are wider or narrower than K's (head_size_v != head_size): V's block
// scales take their own rows (head_size_v / 16 bytes). With K's strides for both, a V row's scales
// overlapped the next row's (wider V) or ran past the layer's page into the next one (narrower V).
TEST(KvStorage, Nvfp4VScaleRowsFollowHeadSizeV) {
  for (auto [head, head_v] : {std::pair{32, 64}, std::pair{64, 32}}) {
    SCOPED_TRACE(fmt::format("head {} / head_size_v {}", head, head_v));
    ModelSpec m;
    m.name = "t";
    m.max_position_embeddings = 1 << 16;
    LayerSpec l = attn_layer(0, 4, 2, head, KvCacheDType::kNvfp4, DType::kFloat32);
    l.head_size_v = head_v;
    m.attention_layers.push_back(l);
    KvPlanOptions o;
    o.block_size = 4;
    const KvPlan plan = plan_kv_cache(m, {}, o);
    KvCacheStorage storage(plan, 6);
    const KvCacheView v = storage.view(0);
    EXPECT_EQ(v.sb_token, head / 16);
    EXPECT_EQ(v.v_sb_token, head_v / 16);
    EXPECT_EQ(v.v_sb_head, 4 * head_v / 16);
    // Every slot of blocks 1..4 written with its own rows, then read back: a row's scales must
    // survive its neighbours' writes, and blocks 0 and 5 (the pages around them) stay zero.
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<std::vector<float>> first(16 * 2);
    for (int64_t slot = 4; slot < 20; ++slot) {
      std::vector<float> k(size_t(2 * head)), val(size_t(2 * head_v));
      for (float& x : k) x = nd(rng);
      for (float& x : val) x = nd(rng) * 8.f;
      write_kv_cpu(args_for(v, k, val, {slot}));
      for (int h = 0; h < 2; ++h) {
        auto& got = first[size_t((slot - 4) * 2 + h)];
        got.resize(size_t(head_v));
        read_kv_cpu(v, slot, h, /*value=*/true, got.data());
      }
    }
    for (int64_t slot = 4; slot < 20; ++slot)
      for (int h = 0; h < 2; ++h) {
        std::vector<float> again(static_cast<size_t>(head_v));
        read_kv_cpu(v, slot, h, /*value=*/true, again.data());
        EXPECT_EQ(again, first[size_t((slot - 4) * 2 + h)]) << "slot " << slot << " head " << h;
      }
    const auto* base = static_cast<const uint8_t*>(storage.tensor(0));
    const int64_t page = plan.page_bytes;
    for (int64_t b : {int64_t(0), int64_t(5)})
      for (int64_t i = 0; i < page; ++i)
        ASSERT_EQ(base[b * page + i], 0) << "block " << b << " byte " << i << " was written";
  }
}

}  // namespace
}  // namespace attnkit
