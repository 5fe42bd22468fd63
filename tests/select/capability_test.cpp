// invalid_reasons: every reason string, in its fixed order, and the block-size / head-size rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attnkit/capability.hpp"

namespace attnkit {
namespace {

using Reasons = std::vector<std::string>;

LayerSpec layer() {
  LayerSpec s;
  s.num_heads = 16;
  s.num_kv_heads = 4;
  s.head_size = s.head_size_v = 128;
  return s;
}

DeviceInfo gpu(int major, int minor, Platform p = Platform::kCuda) {
  DeviceInfo d;
  d.platform = p;
  d.cc = {major, minor};
  return d;
}

// A strict backend: cuda SM80..90, fp16/bf16, head sizes 64/128, blocks of 16, nothing optional.
Capabilities strict() {
  Capabilities c;
  c.name = "STRICT";
  c.platforms = {Platform::kCuda};
  c.min_compute_capability = 80;
  c.max_compute_capability = 90;
  c.head_sizes.sizes = {64, 128};
  c.kernel_block_sizes = {BlockSizeEntry::exact(16)};
  return c;
}

TEST(InvalidReasons, ValidLayerHasNoReasons) {
  EXPECT_TRUE(invalid_reasons(strict(), layer(), gpu(9, 0)).empty());
}

TEST(InvalidReasons, EachReasonString) {
  const Capabilities c = strict();
  const DeviceInfo d = gpu(8, 0);
  auto one = [&](auto mutate) {
    LayerSpec s = layer();
    mutate(s);
    return invalid_reasons(c, s, d);
  };
  EXPECT_EQ(one([](LayerSpec& s) { s.head_size = s.head_size_v = 96; }),
            Reasons{"head_size not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.head_size_v = 64; }), Reasons{"head_size_v not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.dtype = DType::kFloat32; }), Reasons{"dtype not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.kv_cache_dtype = KvCacheDType::kFp8E4M3; }),
            Reasons{"kv_cache_dtype not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.block_size = 8; }), Reasons{"block_size not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.mm_prefix = true; }),
            Reasons{"partial multimodal token full attention not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.sinks = true; }), Reasons{"attention sinks not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.kv_scale_granularity = ScaleGranularity::kPerHead; }),
            Reasons{"per-head quant scales not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.sliding_window = 4096; }),
            Reasons{"sliding window not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.alibi = true; }), Reasons{"ALiBi not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.logits_soft_cap = 50.0; }),
            Reasons{"logits softcap not supported"});
  EXPECT_EQ(one([](LayerSpec& s) { s.attn_type = AttentionType::kCross; }),
            (Reasons{"attention type encoder_decoder not supported",
                     "non-causal attention not supported"}));
  EXPECT_EQ(invalid_reasons(c, layer(), gpu(10, 0)), Reasons{"compute capability not supported"});
  EXPECT_EQ(invalid_reasons(c, layer(), gpu(7, 5)), Reasons{"compute capability not supported"});
  DeviceInfo cpu;
  cpu.platform = Platform::kCpu;
  EXPECT_EQ(invalid_reasons(c, layer(), cpu), Reasons{"platform cpu not supported"});
}

TEST(InvalidReasons, MlaAndSparse) {
  Capabilities c = strict();
  LayerSpec s = layer();
  s.mla = MlaDims{512, 128, 64, 128};
  s.head_size = 576;
  s.head_size_v = 512;
  EXPECT_EQ(invalid_reasons(c, s, gpu(9, 0)),
            (Reasons{"head_size not supported", "MLA not supported"}));
  c.mla = MlaSupport::kMlaOnly;
  c.head_sizes.sizes = {576};
  EXPECT_TRUE(invalid_reasons(c, s, gpu(9, 0)).empty());  // MLA skips the head_size_v pair rule
  EXPECT_EQ(invalid_reasons(c, layer(), gpu(9, 0)),
            (Reasons{"head_size not supported", "non-MLA not supported"}));
  s.mla->sparse = true;
  EXPECT_EQ(invalid_reasons(c, s, gpu(9, 0)), Reasons{"sparse not supported"});
  c.sparse = true;
  EXPECT_TRUE(invalid_reasons(c, s, gpu(9, 0)).empty());
  s.mla->sparse = false;
  EXPECT_EQ(invalid_reasons(c, s, gpu(9, 0)), Reasons{"non-sparse not supported"});
}

TEST(InvalidReasons, MetadataFormsAndEncoderOnly) {
  Capabilities c = strict();
  c.non_causal = true;
  c.attn_types = {AttentionType::kDecoder, AttentionType::kEncoderOnly, AttentionType::kEncoder};
  LayerSpec s = layer();
  s.attn_type = AttentionType::kEncoderOnly;
  EXPECT_EQ(invalid_reasons(c, s, gpu(9, 0)), Reasons{"cu_seqlens_k metadata not supported"});
  s.attn_type = AttentionType::kEncoder;  // no persistent cache either
  EXPECT_EQ(invalid_reasons(c, s, gpu(9, 0)), Reasons{"cu_seqlens_k metadata not supported"});
  c.metadata_forms = unsigned(MetadataForm::kBlockTable);
  EXPECT_EQ(invalid_reasons(c, layer(), gpu(9, 0)), Reasons{"seqused_k metadata not supported"});
  EXPECT_EQ(required_metadata_forms(layer()),
            (std::vector<MetadataForm>{MetadataForm::kSeqUsedK, MetadataForm::kBlockTable}));
  EXPECT_EQ(to_string(MetadataForm::kCuSeqlensK), "cu_seqlens_k");
}

TEST(InvalidReasons, CombinationRuleReasonsComeLast) {
  Capabilities c = strict();
  c.combination = [](const LayerSpec& s, const DeviceInfo&) {
    return s.num_heads / s.num_kv_heads > 2 ? Reasons{"GQA ratio > 2 not supported"} : Reasons{};
  };
  LayerSpec s = layer();
  s.sinks = true;
  EXPECT_EQ(invalid_reasons(c, s, gpu(9, 0)),
            (Reasons{"attention sinks not supported", "GQA ratio > 2 not supported"}));
  s.num_kv_heads = 8;
  EXPECT_EQ(invalid_reasons(c, s, gpu(9, 0)), Reasons{"attention sinks not supported"});
}

TEST(InvalidReasons, EveryFailingReasonInFixedOrder) {
  LayerSpec s = layer();
  s.head_size = 100;
  s.head_size_v = 100;
  s.dtype = DType::kFloat32;
  s.sinks = s.alibi = true;
  s.sliding_window = 128;
  s.logits_soft_cap = 30;
  DeviceInfo cpu;
  cpu.platform = Platform::kCpu;
  EXPECT_EQ(
      invalid_reasons(strict(), s, cpu),
      (Reasons{"head_size not supported", "dtype not supported", "attention sinks not supported",
               "platform cpu not supported", "sliding window not supported", "ALiBi not supported",
               "logits softcap not supported"}));
}

TEST(InvalidReasons, CudaRangeIsNotJudgedOnOtherPlatforms) {
  DeviceInfo mi300 = gpu(9, 4, Platform::kRocm);
  EXPECT_EQ(invalid_reasons(strict(), layer(), mi300), Reasons{"platform rocm not supported"});
  Capabilities rocm = strict();
  rocm.platforms = {Platform::kRocm};
  rocm.min_compute_capability = 94;
  rocm.max_compute_capability = 95;
  EXPECT_TRUE(invalid_reasons(rocm, layer(), mi300).empty());
  EXPECT_EQ(invalid_reasons(rocm, layer(), gpu(9, 0, Platform::kRocm)),
            Reasons{"compute capability not supported"});
}

TEST(InvalidReasons, AutoKvDtypeAcceptedThroughTheModelDtype) {
  Capabilities c = strict();
  c.kv_cache_dtypes = {KvCacheDType::kBFloat16};
  LayerSpec s = layer();
  EXPECT_TRUE(invalid_reasons(c, s, gpu(9, 0)).empty());  // auto -> bfloat16
  s.dtype = DType::kFloat16;
  EXPECT_EQ(invalid_reasons(c, s, gpu(9, 0)), Reasons{"kv_cache_dtype not supported"});
  c.kv_cache_dtypes = {};  // any
  s.kv_cache_dtype = KvCacheDType::kNvfp4;
  EXPECT_TRUE(invalid_reasons(c, s, gpu(9, 0)).empty());
}

TEST(InvalidReasons, AsymmetricHeadSizes) {
  Capabilities c = strict();
  c.head_sizes.sizes = {192};
  LayerSpec s = layer();
  s.head_size = 192;
  s.head_size_v = 128;
  EXPECT_EQ(invalid_reasons(c, s, gpu(9, 0)), Reasons{"head_size_v not supported"});
  c.asymmetric_head_sizes = {{192, 128}};
  EXPECT_TRUE(invalid_reasons(c, s, gpu(9, 0)).empty());
  s.head_size_v = 0;  // unset means equal to head_size
  EXPECT_TRUE(invalid_reasons(c, s, gpu(9, 0)).empty());
  c.asymmetric_head_sizes.clear();
  c.any_head_size_v = true;
  s.head_size_v = 7;
  EXPECT_TRUE(invalid_reasons(c, s, gpu(9, 0)).empty());
}

TEST(BlockSizes, ExactAndMultipleOf) {
  const std::vector<BlockSizeEntry> e = {BlockSizeEntry::exact(16), BlockSizeEntry::exact(32),
                                         BlockSizeEntry::multiple_of(64)};
  EXPECT_EQ(to_string(e), "[16, 32, MultipleOf(64)]");
  EXPECT_TRUE(e[0].accepts_kernel_block(16));
  EXPECT_FALSE(e[0].accepts_kernel_block(32));
  EXPECT_TRUE(e[2].accepts_kernel_block(192));
  EXPECT_FALSE(e[2].accepts_kernel_block(96));
  // A manager block is supported when a kernel block base divides it.
  EXPECT_TRUE(block_size_supported(e, 16));
  EXPECT_TRUE(block_size_supported(e, 48));
  EXPECT_FALSE(block_size_supported(e, 8));
  EXPECT_FALSE(block_size_supported(e, 0));
  EXPECT_FALSE(block_size_supported({}, 16));
}

TEST(BlockSizes, PreferredBlock) {
  Capabilities c;
  c.kernel_block_sizes = {BlockSizeEntry::multiple_of(64)};
  EXPECT_EQ(c.preferred_block(16), 64);
  c.kernel_block_sizes = {BlockSizeEntry::multiple_of(16)};
  EXPECT_EQ(c.preferred_block(16), 16);
  c.preferred_block_size = 32;
  EXPECT_EQ(c.preferred_block(16), 32);
}

TEST(HeadSizeRule, AcceptsAndDescribes) {
  HeadSizeRule any;
  EXPECT_TRUE(any.accepts(7));
  EXPECT_FALSE(any.accepts(0));
  EXPECT_EQ(any.describe(), "any");
  HeadSizeRule list{.sizes = {64, 128, 256}};
  EXPECT_TRUE(list.accepts(128));
  EXPECT_FALSE(list.accepts(96));
  EXPECT_EQ(list.describe(), "[64, 128, 256]");
  HeadSizeRule range{.sizes = {}, .min = 32, .max = 256, .multiple_of = 8};
  EXPECT_TRUE(range.accepts(40));
  EXPECT_FALSE(range.accepts(44));
  EXPECT_FALSE(range.accepts(264));
  EXPECT_FALSE(range.accepts(24));
  EXPECT_EQ(range.describe(), "32..256 step 8");
  EXPECT_EQ((HeadSizeRule{.sizes = {}, .min = 0, .max = 512, .multiple_of = 8}).describe(),
            "8..512 step 8");
  EXPECT_EQ((HeadSizeRule{.sizes = {}, .min = 20, .max = 0, .multiple_of = 16}).describe(),
            "32+ step 16");
  EXPECT_EQ((HeadSizeRule{.sizes = {}, .min = 64, .max = 256, .multiple_of = 1}).describe(),
            "64..256");
}

}  // namespace
}  // namespace attnkit
