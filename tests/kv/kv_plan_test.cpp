// KV specs (page bytes per dtype), block-size negotiation and KV planning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <limits>
#include <nlohmann/json.hpp>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/log.hpp"
#include "kv_test_util.hpp"

namespace attnkit {
namespace {

using kvtest::attn_layer;
using kvtest::caps;
using ::testing::HasSubstr;

TEST(KvSpec, PageBytesForEveryDtype) {
  // 8 kv heads x 128, block 16.
  struct Case {
    KvCacheDType kv;
    DType model;
    int64_t per_token;  // one layer, K + V, all heads
    int scales;
  };
  const Case cases[] = {
      {KvCacheDType::kAuto, DType::kBFloat16, 8 * 128 * 2 * 2, 0},
      {KvCacheDType::kFloat16, DType::kBFloat16, 8 * 128 * 2 * 2, 0},
      {KvCacheDType::kBFloat16, DType::kFloat16, 8 * 128 * 2 * 2, 0},
      {KvCacheDType::kAuto, DType::kFloat32, 8 * 128 * 2 * 4, 0},
      {KvCacheDType::kFp8E4M3, DType::kBFloat16, 8 * 128 * 2, 2},
      {KvCacheDType::kFp8E5M2, DType::kBFloat16, 8 * 128 * 2, 2},
      // nvfp4: 64 bytes of nibbles + 8 e4m3 block scales per head vector.
      {KvCacheDType::kNvfp4, DType::kBFloat16, 8 * (64 + 8) * 2, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.kv)));
    const KvLayerSpec s = kv_layer_spec(attn_layer(0, 32, 8, 128, c.kv, c.model));
    EXPECT_EQ(s.kind, KvSpecKind::kFullAttention);
    EXPECT_EQ(s.bytes_per_token(), c.per_token);
    EXPECT_EQ(s.page_bytes(16), 16 * c.per_token);
    EXPECT_EQ(s.scale_count(), c.scales);
  }
  LayerSpec per_head = attn_layer(0, 32, 8, 128, KvCacheDType::kFp8E4M3);
  per_head.kv_scale_granularity = ScaleGranularity::kPerHead;
  EXPECT_EQ(kv_layer_spec(per_head).scale_count(), 16);  // 8 k + 8 v
  EXPECT_EQ(kv_layer_spec(per_head).scale_bytes(), 64);
  per_head.kv_cache_dtype = KvCacheDType::kNvfp4;
  EXPECT_THROW(kv_layer_spec(per_head), InvalidArgument);
  per_head.kv_cache_dtype = KvCacheDType::kBFloat16;
  EXPECT_THROW(kv_layer_spec(per_head), InvalidArgument);
}

TEST(KvSpec, KindsAndMla) {
  LayerSpec mla = attn_layer(3, 128, 128, 576, KvCacheDType::kAuto);
  mla.mla = MlaDims{512, 128, 64, 128, 1536, false};
  mla.head_size_v = 512;
  KvLayerSpec s = kv_layer_spec(mla);
  EXPECT_EQ(s.kind, KvSpecKind::kMlaLatent);
  EXPECT_EQ(s.num_kv_heads, 1);
  EXPECT_EQ(s.bytes_per_token(), 576 * 2);  // one latent row, no V
  mla.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_EQ(kv_layer_spec(mla).bytes_per_token(), 576);
  EXPECT_EQ(kv_layer_spec(mla).scale_count(), 1);  // MLA keeps only k_scale

  LayerSpec sw = attn_layer(1, 8, 4, 64);
  sw.sliding_window = 4096;
  EXPECT_EQ(kv_layer_spec(sw).kind, KvSpecKind::kSlidingWindow);
  LayerSpec chunked = attn_layer(4, 8, 4, 64);
  chunked.attention_chunk_size = 8192;
  EXPECT_EQ(kv_layer_spec(chunked).kind, KvSpecKind::kChunkedLocal);
  EXPECT_EQ(kv_layer_spec(chunked).first_visible_key(20000), 16384);
  EXPECT_NE(kv_layer_spec(chunked).group_key(), kv_layer_spec(attn_layer(6, 8, 4, 64)).group_key());
  chunked.sliding_window = 512;  // vLLM's rule: one or the other
  EXPECT_THROW(kv_layer_spec(chunked), InvalidArgument);
  chunked.sliding_window.reset();
  chunked.attention_chunk_size = 0;
  EXPECT_THROW(kv_layer_spec(chunked), InvalidArgument);
  LayerSpec cross = attn_layer(2, 8, 8, 64);
  cross.attn_type = AttentionType::kCross;
  EXPECT_EQ(kv_layer_spec(cross).kind, KvSpecKind::kCrossAttention);
  LayerSpec enc = attn_layer(0, 8, 8, 64);
  enc.attn_type = AttentionType::kEncoderOnly;
  EXPECT_EQ(kv_layer_spec(enc).kind, KvSpecKind::kNoCache);
  EXPECT_EQ(kv_layer_spec(enc).bytes_per_token(), 0);
  LayerSpec shared = attn_layer(5, 8, 4, 64);
  shared.kv_sharing_target_layer = 1;
  EXPECT_EQ(kv_layer_spec(shared).kind, KvSpecKind::kShared);
  EXPECT_EQ(kv_layer_spec(shared).bytes_per_token(), 0);

  StateLayerSpec st;
  st.layer_index = 0;
  st.state_bytes_per_request = 1000;
  EXPECT_EQ(kv_layer_spec(st).page_bytes(16), 1000);
  st.state_bytes_per_request = 0;
  EXPECT_THROW(kv_layer_spec(st), InvalidArgument);
}

TEST(Negotiate, CompatibleBackendsPickPreferred) {
  const Capabilities a = caps("CUDA_FLASH", {BlockSizeEntry::multiple_of(16)}, 16);
  const Capabilities b = caps("CUDA_MLA", {BlockSizeEntry::multiple_of(16)}, 64);
  auto c = negotiate_block_size({&a, &a}, std::nullopt, 16);
  EXPECT_EQ(c.manager_block_size, 16);
  EXPECT_EQ(c.kernel_block_size, 16);
  EXPECT_THAT(c.reason, HasSubstr("preferred by CUDA_FLASH"));
  c = negotiate_block_size({&b, &a}, std::nullopt, 16);
  EXPECT_EQ(c.manager_block_size, 64);  // first backend's preference, accepted by both
  EXPECT_EQ(c.ratio(), 1);
  // Exact lists with one common entry beyond every preference.
  const Capabilities x = caps("X", {BlockSizeEntry::exact(16), BlockSizeEntry::exact(64)}, 16);
  const Capabilities y = caps("Y", {BlockSizeEntry::exact(64), BlockSizeEntry::exact(128)}, 128);
  c = negotiate_block_size({&x, &y}, std::nullopt, 16);
  EXPECT_EQ(c.kernel_block_size, 64);
  // MultipleOf bases with no common declared value: their lcm.
  const Capabilities m24 = caps("M24", {BlockSizeEntry::multiple_of(24)});
  const Capabilities m16 = caps("M16", {BlockSizeEntry::multiple_of(16)});
  c = negotiate_block_size({&m24, &m16}, std::nullopt, 16);
  EXPECT_EQ(c.manager_block_size, 48);
  EXPECT_EQ(c.kernel_block_size, 48);
  // No backend: the default.
  EXPECT_EQ(negotiate_block_size({}, std::nullopt, 16).manager_block_size, 16);
}

TEST(Negotiate, IncompatibleNamesEveryBackend) {
  const Capabilities a = caps("FLASH_A", {BlockSizeEntry::exact(32)});
  const Capabilities b = caps("TRTLLM_B", {BlockSizeEntry::exact(48), BlockSizeEntry::exact(96)});
  try {
    negotiate_block_size({&a, &b}, std::nullopt, 16);
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_THAT(e.what(), HasSubstr("FLASH_A accepts [32]"));
    EXPECT_THAT(e.what(), HasSubstr("TRTLLM_B accepts [48, 96]"));
    EXPECT_EQ(e.reasons().size(), 2u);
  }
  // A pinned size no backend can split.
  const Capabilities c = caps("C16", {BlockSizeEntry::multiple_of(16)});
  try {
    negotiate_block_size({&c, &a}, 24, 16);
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_THAT(e.what(), HasSubstr("block size 24 (pinned)"));
    EXPECT_THAT(e.what(), HasSubstr("C16 accepts [MultipleOf(16)]"));
    EXPECT_THAT(e.what(), HasSubstr("FLASH_A accepts [32]"));
  }
}

TEST(Negotiate, PinnedManagerBlockSplitsIntoKernelBlocks) {
  const Capabilities a = caps("EXACT", {BlockSizeEntry::exact(16), BlockSizeEntry::exact(32)});
  const Capabilities b = caps("M16", {BlockSizeEntry::multiple_of(16)});
  const auto c = negotiate_block_size({&a, &b}, 128, 16);
  EXPECT_EQ(c.manager_block_size, 128);
  EXPECT_EQ(c.kernel_block_size, 32);  // largest kernel block inside the manager block
  EXPECT_EQ(c.ratio(), 4);
  EXPECT_THAT(c.reason, HasSubstr("split into 4 kernel blocks of 32"));
  const std::vector<int32_t> manager = {5, 2, 9};
  EXPECT_EQ(expand_block_table(manager, 4),
            (std::vector<int32_t>{20, 21, 22, 23, 8, 9, 10, 11, 36, 37, 38, 39}));
  EXPECT_EQ(largest_common_kernel_block({&a, &b}, 48), 16);
  EXPECT_EQ(largest_common_kernel_block({&a}, 8), std::nullopt);
}

// A chunked local group whose backend reads each chunk as whole blocks
// (Capabilities::chunk_in_whole_blocks, CUDA_FLASH) gets kernel blocks that divide the chunk:
// a pinned size is split, a preference that does not divide is passed over; other groups and
// backends keep their sizes.
TEST(Negotiate, ChunkedLocalKernelBlocksDivideTheChunk) {
  const Capabilities any = caps("ANY", {BlockSizeEntry::multiple_of(1)}, 16);
  EXPECT_EQ(largest_common_kernel_block({&any}, 48, 8192), 16);
  EXPECT_EQ(largest_common_kernel_block({&any}, 48), 48);
  auto c = negotiate_block_size({&any}, 48, 16, 8192);
  EXPECT_EQ(c.manager_block_size, 48);
  EXPECT_EQ(c.kernel_block_size, 16);
  EXPECT_THAT(c.reason, HasSubstr("kernel blocks dividing 8192"));
  c = negotiate_block_size({&any}, std::nullopt, 16, 200);
  EXPECT_EQ(c.manager_block_size, 8);  // the preferred 16 narrowed: 200 = 25 x 8
  EXPECT_EQ(c.kernel_block_size, 8);
  EXPECT_THAT(c.reason, HasSubstr("preferred by ANY, narrowed to divide 200"));
  const Capabilities m16 = caps("M16", {BlockSizeEntry::multiple_of(16)}, 16);
  EXPECT_THROW(negotiate_block_size({&m16}, std::nullopt, 16, 200), Unsupported);

  ModelSpec m = kvtest::llama_8b();
  for (int i = 0; i < 32; i += 2) m.attention_layers[size_t(i)].attention_chunk_size = 200;
  Capabilities whole = any;
  whole.chunked_local = whole.chunk_in_whole_blocks = true;
  KvPlanOptions o;
  o.memory_bytes = 8ull << 30;
  KvPlan p = plan_kv_cache(m, kvtest::same_backend(m, whole), o);
  ASSERT_EQ(p.groups.size(), 2u);
  for (const KvGroupPlan& g : p.groups)
    EXPECT_EQ(g.kernel_block_size, g.kind == KvSpecKind::kChunkedLocal ? 8 : 16) << g.group_id;
  Capabilities cpu = any;
  cpu.chunked_local = true;  // reads any key of any block
  p = plan_kv_cache(m, kvtest::same_backend(m, cpu), o);
  for (const KvGroupPlan& g : p.groups) EXPECT_EQ(g.kernel_block_size, 16) << g.group_id;
}

TEST(KvPlan, Llama8bBytesPerTokenAndBudget) {
  const Capabilities fa = caps("CUDA_FLASH", {BlockSizeEntry::multiple_of(16)}, 16);
  ModelSpec m = kvtest::llama_8b();
  KvPlanOptions o;
  o.memory_bytes = 80ull << 30;
  KvPlan p = plan_kv_cache(m, kvtest::same_backend(m, fa), o);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.bytes_per_token, 131072);
  EXPECT_EQ(p.groups[0].bytes_per_token, 131072);
  EXPECT_EQ(p.num_tensors, 32);
  EXPECT_EQ(p.page_bytes, 16 * 8 * 128 * 2 * 2);
  EXPECT_EQ(p.bytes_per_block, 2 << 20);
  EXPECT_EQ(p.num_blocks, 40960);
  EXPECT_EQ(p.max_tokens, (40960 - 1) * 16);  // block 0 is the null block
  EXPECT_FALSE(p.needs_zeroing);
  const auto lines = describe_kv_plan(p);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("bytes per token: 131072"));
  EXPECT_THAT(all, HasSubstr("40960 blocks, 655344 tokens"));
  EXPECT_THAT(kv_plan_to_json(p), HasSubstr("\"bytes_per_token\":131072"));

  // fp8: half, plus 2 fp32 scales per layer stored beside the cache.
  m = kvtest::llama_8b(KvCacheDType::kFp8E4M3);
  p = plan_kv_cache(m, kvtest::same_backend(m, fa), o);
  EXPECT_EQ(p.bytes_per_token, 65536);
  EXPECT_EQ(p.num_scale_values, 64);
  EXPECT_EQ(p.scale_bytes, 256);
  EXPECT_EQ(p.num_blocks, int64_t(((80ull << 30) - 256) / (1 << 20)));
}

// A context length past INT_MAX (max_position_embeddings 2^63 - 1) keeps the encoder length a
// valid int: it used to wrap to -1, and every request was then refused ("encoder length must be
// in [0, -1]").
TEST(KvPlan, ContextLengthPastIntMaxCapsTheEncoderLength) {
  const Capabilities fa = caps("CUDA_FLASH", {BlockSizeEntry::multiple_of(16)}, 16);
  ModelSpec m = kvtest::llama_8b();
  m.max_position_embeddings = std::numeric_limits<int64_t>::max();
  KvPlanOptions o;
  o.memory_bytes = 1ull << 30;
  const KvPlan p = plan_kv_cache(m, kvtest::same_backend(m, fa), o);
  EXPECT_EQ(p.max_model_len, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(p.max_encoder_len, std::numeric_limits<int>::max());
}

// Whisper's cross-attention caches hold its encoder input (max_source_positions, 1500 frames),
// not the decoder's 448 positions; an explicit max_encoder_len still wins.
TEST(KvPlan, CrossAttentionCachesHoldTheModelsEncoderLength) {
  const Capabilities fa = caps("CUDA_FLASH", {BlockSizeEntry::multiple_of(16)}, 16);
  ModelSpec m;  // whisper-large-v3's shape, one layer of each kind
  m.name = "whisper";
  m.num_layers = 2;
  m.is_encoder_decoder = true;
  m.max_position_embeddings = 448;
  m.max_encoder_positions = 1500;
  const AttentionType types[] = {AttentionType::kEncoder, AttentionType::kDecoder,
                                 AttentionType::kCross};
  for (int i = 0; i < 3; ++i) {
    m.attention_layers.push_back(kvtest::attn_layer(i, 20, 20, 64));
    m.attention_layers.back().attn_type = types[i];
  }
  KvPlanOptions o;
  KvPlan p = plan_kv_cache(m, kvtest::same_backend(m, fa), o);
  EXPECT_EQ(p.max_model_len, 448);
  EXPECT_EQ(p.max_encoder_len, 1500);
  // One request: ceil(1500 / 16) cross blocks beside ceil(448 / 16) self-attention blocks.
  EXPECT_EQ(p.blocks_needed(448, 1500), 28 + 94);
  o.max_encoder_len = 600;
  p = plan_kv_cache(m, kvtest::same_backend(m, fa), o);
  EXPECT_EQ(p.max_encoder_len, 600);
}

TEST(KvPlan, NemotronHybridRaisesAttentionBlockAndPadsState) {
  const Capabilities fa = caps("CUDA_FLASH", {BlockSizeEntry::multiple_of(16)}, 16);
  const ModelSpec m = kvtest::nemotron_nano();
  ASSERT_EQ(m.attention_layers.size(), 6u);
  ASSERT_EQ(m.state_layers.size(), 23u);
  const int64_t state = m.state_layers[0].state_bytes_per_request;
  ScopedLogCapture cap;
  const KvPlan p = plan_kv_cache(m, kvtest::same_backend(m, fa));
  // 1024 B per token per attention layer: 16 * ceil(2134016 / (16 * 1024)) = 2096 tokens.
  const KvGroupPlan& attn = p.group_of_layer(m.attention_layers[0].layer_index);
  EXPECT_EQ(attn.kind, KvSpecKind::kFullAttention);
  EXPECT_EQ(attn.manager_block_size, 2096);
  EXPECT_EQ(attn.kernel_block_size, 2096);
  EXPECT_GE(attn.real_page_bytes, state);
  EXPECT_EQ(p.page_bytes, 2096 * 1024);
  EXPECT_THAT(attn.block_size_reason, HasSubstr("raised from 16 to 2096"));
  const KvGroupPlan& mamba = p.group_of_layer(m.state_layers[0].layer_index);
  EXPECT_EQ(mamba.real_page_bytes, state);
  EXPECT_EQ(mamba.page_bytes, 2096 * 1024);  // padded to the attention page
  // 6 attention layers and 23 mamba layers: groups of 6 (1 attention + 4 mamba groups).
  EXPECT_EQ(p.num_tensors, 6);
  EXPECT_EQ(p.groups.size(), 5u);
  EXPECT_TRUE(p.needs_zeroing);
  EXPECT_THAT(cap.text(), HasSubstr("Setting attention block size"));
  EXPECT_THAT(cap.text(), HasSubstr("Padding the state page"));

  // With a kernel that takes only 16/32/64, the manager block is split into 131 kernel blocks.
  const Capabilities small = caps(
      "SMALL", {BlockSizeEntry::exact(16), BlockSizeEntry::exact(32), BlockSizeEntry::exact(64)});
  const KvPlan q = plan_kv_cache(m, kvtest::same_backend(m, small));
  const KvGroupPlan& g = q.group_of_layer(m.attention_layers[0].layer_index);
  EXPECT_EQ(g.manager_block_size, 2096);
  EXPECT_EQ(g.kernel_block_size, 16);
  EXPECT_EQ(g.ratio(), 131);
}

TEST(KvPlan, PinnedBlockSizeOverrideIsLoggedAndRecorded) {
  const Capabilities fa = caps("CUDA_FLASH", {BlockSizeEntry::multiple_of(16)}, 16);
  const ModelSpec m = kvtest::nemotron_nano();
  reset_warn_once();
  ScopedLogCapture cap;
  KvPlanOptions o;
  o.block_size = 64;
  const KvPlan p = plan_kv_cache(m, kvtest::same_backend(m, fa), o);
  const KvGroupPlan& attn = p.group_of_layer(m.attention_layers[0].layer_index);
  EXPECT_EQ(attn.manager_block_size, 64 * 33);  // 64 * ceil(2084 / 64)
  EXPECT_THAT(attn.block_size_reason, HasSubstr("pinned by the user"));
  EXPECT_THAT(cap.text(), HasSubstr("Overriding the user's block size"));
  ASSERT_FALSE(p.notes.empty());
  EXPECT_THAT(p.notes[0], HasSubstr("Overriding the user's block size"));
  std::string all;
  for (const auto& l : describe_kv_plan(p)) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("note: Overriding the user's block size"));

  // An incompatible pinned size fails naming every backend of the group.
  const Capabilities other = caps("OTHER", {BlockSizeEntry::exact(32)});
  ModelSpec l = kvtest::llama_8b();
  auto per_layer = kvtest::same_backend(l, fa);
  per_layer[7] = {&other};
  o.block_size = 48;
  try {
    plan_kv_cache(l, per_layer, o);
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_THAT(e.what(), HasSubstr("CUDA_FLASH accepts [MultipleOf(16)]"));
    EXPECT_THAT(e.what(), HasSubstr("OTHER accepts [32]"));
  }
}

TEST(KvPlan, SlidingAndFullGroupsAndMixedPrecisionZeroing) {
  ModelSpec m;
  m.name = "gemma-like";
  m.max_position_embeddings = 8192;
  for (int i = 0; i < 8; ++i) {
    LayerSpec l = attn_layer(i, 8, 4, 128);
    if (i % 2 == 0) l.sliding_window = 1024;
    m.attention_layers.push_back(l);
  }
  KvPlan p = plan_kv_cache(m, {});
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].kind, KvSpecKind::kSlidingWindow);
  EXPECT_EQ(p.groups[1].kind, KvSpecKind::kFullAttention);
  EXPECT_EQ(p.num_tensors, 4);
  EXPECT_FALSE(p.needs_zeroing);
  // Sliding layers in fp8, full in bf16: the two groups share tensors with different formats.
  for (auto& l : m.attention_layers)
    if (l.sliding_window) l.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  p = plan_kv_cache(m, {});
  EXPECT_TRUE(p.needs_zeroing);
  EXPECT_THAT(p.zeroing_reason, HasSubstr("mixed-precision"));
  // The fp8 page is half the bf16 page: its block size doubles instead of padding.
  EXPECT_EQ(p.groups[0].manager_block_size, 32);
  EXPECT_EQ(p.groups[0].real_page_bytes, p.groups[1].real_page_bytes);
}

// min_blocks_for_max_len is the threshold of tokens_for_blocks: with one block fewer not a token
// of a max_model_len sequence fits. Sliding and full groups, windows only, full only.
TEST(KvPlan, MinBlocksForMaxLenIsTokensForBlocksThreshold) {
  for (int full_every : {2, 0, 1}) {
    ModelSpec m;
    m.name = "threshold";
    m.max_position_embeddings = 8192;
    for (int i = 0; i < 6; ++i) {
      LayerSpec l = attn_layer(i, 8, 4, 128);
      if (full_every != 1 && (full_every == 0 || i % full_every != 0)) l.sliding_window = 1000;
      m.attention_layers.push_back(l);
    }
    for (int chunk : {1, 512}) {
      KvPlanOptions o;
      o.max_tokens_per_step = chunk;
      const KvPlan p = plan_kv_cache(m, {}, o);
      const int64_t n = p.min_blocks_for_max_len();
      EXPECT_GT(p.tokens_for_blocks(n), 0) << full_every << " " << chunk;
      EXPECT_EQ(p.tokens_for_blocks(n - 1), 0) << full_every << " " << chunk;
    }
  }
}

TEST(KvPlan, KvSharingValidation) {
  ModelSpec m = kvtest::llama_8b();
  m.attention_layers[20].kv_sharing_target_layer = 10;
  m.attention_layers[21].kv_sharing_target_layer = 20;  // chain resolves to 10
  KvPlan p = plan_kv_cache(m, {});
  EXPECT_EQ(p.layer(20).kind, KvSpecKind::kShared);
  EXPECT_EQ(*p.layer(21).shares_with, 10);
  EXPECT_EQ(p.bytes_per_token, 30 * 4096);  // the two readers have no memory
  EXPECT_THAT(p.groups[0].shared_layers, ::testing::ElementsAre(20, 21));

  ModelSpec later = kvtest::llama_8b();
  later.attention_layers[5].kv_sharing_target_layer = 9;
  EXPECT_THROW(
      {
        try {
          plan_kv_cache(later, {});
        } catch (const InvalidArgument& e) {
          EXPECT_THAT(e.what(), HasSubstr("must come before the current layer"));
          throw;
        }
      },
      InvalidArgument);
  ModelSpec self = kvtest::llama_8b();
  self.attention_layers[5].kv_sharing_target_layer = 5;
  EXPECT_THROW(plan_kv_cache(self, {}), InvalidArgument);
  ModelSpec missing = kvtest::llama_8b();
  missing.attention_layers[5].kv_sharing_target_layer = -3;
  EXPECT_THROW(plan_kv_cache(missing, {}), InvalidArgument);
  ModelSpec type = kvtest::llama_8b();
  type.attention_layers[2].sliding_window = 512;
  type.attention_layers[6].kv_sharing_target_layer = 2;  // full reading a sliding layer
  try {
    plan_kv_cache(type, {});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("must be the same type"));
  }
}

TEST(KvPlan, SharingReaderBackendJoinsTheNegotiation) {
  const Capabilities fa = caps("CUDA_FLASH", {BlockSizeEntry::multiple_of(16)}, 16);
  const Capabilities draft = caps("DRAFT", {BlockSizeEntry::exact(64)}, 64);
  ModelSpec m = kvtest::llama_8b();
  m.attention_layers[31].kv_sharing_target_layer = 30;
  auto per_layer = kvtest::same_backend(m, fa);
  per_layer[31] = {&draft};
  const KvPlan p = plan_kv_cache(m, per_layer);
  EXPECT_EQ(p.groups[0].kernel_block_size, 64);
  EXPECT_THAT(p.groups[0].backends, ::testing::ElementsAre("CUDA_FLASH", "DRAFT"));
}

TEST(KvPlan, MlaModelUsesTheMlaBackendPreference) {
  const Capabilities mla = caps("CUDA_MLA", {BlockSizeEntry::multiple_of(16)}, 64);
  ModelSpec m;
  m.name = "deepseek-like";
  m.max_position_embeddings = 163840;
  for (int i = 0; i < 61; ++i) {
    LayerSpec l = attn_layer(i, 128, 128, 576);
    l.head_size_v = 512;
    l.mla = MlaDims{512, 128, 64, 128, 1536, false};
    m.attention_layers.push_back(l);
  }
  KvPlanOptions o;
  o.memory_bytes = 40ull << 30;
  const KvPlan p = plan_kv_cache(m, kvtest::same_backend(m, mla), o);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kind, KvSpecKind::kMlaLatent);
  EXPECT_EQ(p.groups[0].manager_block_size, 64);
  EXPECT_EQ(p.bytes_per_token, 61 * 576 * 2);
  EXPECT_EQ(p.num_blocks, int64_t((40ull << 30) / (61ull * 576 * 2 * 64)));
  // The JSON form parses and carries the same numbers.
  const auto j = nlohmann::json::parse(kv_plan_to_json(p));
  EXPECT_EQ(j["bytes_per_token"], 61 * 576 * 2);
  EXPECT_EQ(j["groups"][0]["kind"], "mla_latent");
  EXPECT_EQ(j["groups"][0]["manager_block_size"], 64);
  EXPECT_EQ(j["num_blocks"], p.num_blocks);
  EXPECT_FALSE(j["needs_zeroing"].get<bool>());
}

}  // namespace
}  // namespace attnkit
