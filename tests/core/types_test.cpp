// Core value types: dtype and KV-format parsing and facts, LayerSpec::signature.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "attnkit/error.hpp"
#include "attnkit/types.hpp"

namespace attnkit {
namespace {

using ::testing::HasSubstr;

TEST(DType, ParsesNamesAndAliasesCaseInsensitively) {
  EXPECT_EQ(parse_dtype("float32"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("FP32"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("float16"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("half"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("fp16"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("BF16"), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::kBFloat16);
  try {
    parse_dtype("int8");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("'int8'"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("float32, float16, bfloat16"));
  }
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16})
    EXPECT_EQ(parse_dtype(to_string(d)), d);
  EXPECT_EQ(dtype_bytes(DType::kFloat32), 4);
  EXPECT_EQ(dtype_bytes(DType::kBFloat16), 2);
  EXPECT_EQ(dtype_bytes(DType::kFloat16), 2);
}

TEST(KvCacheDType, ParsesFormatsAndAliases) {
  EXPECT_EQ(parse_kv_cache_dtype("auto"), KvCacheDType::kAuto);
  EXPECT_EQ(parse_kv_cache_dtype("fp8"), KvCacheDType::kFp8E4M3);
  EXPECT_EQ(parse_kv_cache_dtype("FP8_E4M3"), KvCacheDType::kFp8E4M3);
  EXPECT_EQ(parse_kv_cache_dtype("fp8_e5m2"), KvCacheDType::kFp8E5M2);
  EXPECT_EQ(parse_kv_cache_dtype("nvfp4"), KvCacheDType::kNvfp4);
  EXPECT_EQ(parse_kv_cache_dtype("bf16"), KvCacheDType::kBFloat16);
  EXPECT_EQ(parse_kv_cache_dtype("float16"), KvCacheDType::kFloat16);
  EXPECT_THROW(parse_kv_cache_dtype("uint8"), InvalidArgument);
  EXPECT_THROW(parse_kv_cache_dtype(""), InvalidArgument);
  for (auto d : {KvCacheDType::kAuto, KvCacheDType::kFloat16, KvCacheDType::kBFloat16,
                 KvCacheDType::kFp8E4M3, KvCacheDType::kFp8E5M2, KvCacheDType::kNvfp4})
    EXPECT_EQ(parse_kv_cache_dtype(to_string(d)), d);
}

TEST(KvCacheDType, FormatInfo) {
  const auto& e4m3 = kv_format_info(KvCacheDType::kFp8E4M3);
  EXPECT_EQ(e4m3.name, "fp8_e4m3");
  EXPECT_EQ(e4m3.bits_per_element, 8);
  EXPECT_TRUE(e4m3.needs_scales);
  EXPECT_EQ(e4m3.default_scale_granularity, ScaleGranularity::kPerTensor);
  EXPECT_EQ(e4m3.kernel_view, KvKernelView::kFp8E4M3);
  const auto& e5m2 = kv_format_info(KvCacheDType::kFp8E5M2);
  EXPECT_EQ(e5m2.kernel_view, KvKernelView::kFp8E5M2);
  EXPECT_TRUE(e5m2.needs_scales);
  const auto& fp4 = kv_format_info(KvCacheDType::kNvfp4);
  EXPECT_EQ(fp4.bits_per_element, 4);
  EXPECT_EQ(fp4.default_scale_granularity, ScaleGranularity::kPerBlock16);
  EXPECT_EQ(fp4.kernel_view, KvKernelView::kE2M1Packed);
  for (auto d : {KvCacheDType::kFloat16, KvCacheDType::kBFloat16}) {
    EXPECT_EQ(kv_format_info(d).bits_per_element, 16);
    EXPECT_FALSE(kv_format_info(d).needs_scales);
  }
  EXPECT_EQ(kv_format_info(KvCacheDType::kFloat16).kernel_view, KvKernelView::kFloat16);
}

TEST(KvCacheDType, ResolutionAndBytes) {
  EXPECT_EQ(resolve_kv_dtype(KvCacheDType::kAuto, DType::kBFloat16), KvCacheDType::kBFloat16);
  EXPECT_EQ(resolve_kv_dtype(KvCacheDType::kAuto, DType::kFloat16), KvCacheDType::kFloat16);
  EXPECT_EQ(resolve_kv_dtype(KvCacheDType::kAuto, DType::kFloat32), KvCacheDType::kAuto);
  EXPECT_EQ(resolve_kv_dtype(KvCacheDType::kFp8E4M3, DType::kFloat16), KvCacheDType::kFp8E4M3);
  EXPECT_EQ(kv_bytes_per_head_vector(KvCacheDType::kAuto, DType::kFloat32, 128), 512);
  EXPECT_EQ(kv_bytes_per_head_vector(KvCacheDType::kBFloat16, DType::kBFloat16, 128), 256);
  EXPECT_EQ(kv_bytes_per_head_vector(KvCacheDType::kFp8E4M3, DType::kBFloat16, 576), 576);
  EXPECT_EQ(kv_bytes_per_head_vector(KvCacheDType::kNvfp4, DType::kBFloat16, 128), 64);
  EXPECT_EQ(kv_block_scale_bytes_per_head_vector(KvCacheDType::kNvfp4, 128), 8);
  EXPECT_EQ(kv_block_scale_bytes_per_head_vector(KvCacheDType::kFp8E4M3, 128), 0);
}

TEST(AttentionType, ParseAndNames) {
  EXPECT_EQ(parse_attention_type("decoder"), AttentionType::kDecoder);
  EXPECT_EQ(parse_attention_type("ENCODER_ONLY"), AttentionType::kEncoderOnly);
  EXPECT_EQ(parse_attention_type("cross"), AttentionType::kCross);
  EXPECT_EQ(parse_attention_type("encoder_decoder"), AttentionType::kCross);
  EXPECT_EQ(parse_attention_type("encoder"), AttentionType::kEncoder);
  EXPECT_THROW(parse_attention_type("causal"), InvalidArgument);
  EXPECT_EQ(to_string(Platform::kRocm), "rocm");
  EXPECT_EQ(to_string(StateKind::kMamba), "mamba");
  EXPECT_EQ(to_string(StateKind::kLinearAttention), "linear_attention");
}

LayerSpec base_layer() {
  LayerSpec s;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.head_size = s.head_size_v = 128;
  return s;
}

TEST(LayerSpec, SignatureIgnoresIndexAndWhichLayerIsShared) {
  LayerSpec a = base_layer(), b = base_layer();
  b.layer_index = 17;
  EXPECT_EQ(a.signature(), b.signature());
  EXPECT_EQ(a.signature(), "decoder|h32/8|d128/128|bfloat16|kv:auto:none");
  // Reading a shared cache can change the selection (vLLM's FLEX_ATTENTION refuses it); which
  // layer is read cannot.
  LayerSpec c = base_layer(), d = base_layer();
  c.kv_sharing_target_layer = 3;
  d.kv_sharing_target_layer = 5;
  EXPECT_NE(a.signature(), c.signature());
  EXPECT_EQ(c.signature(), d.signature());
}

TEST(LayerSpec, SignatureChangesWithEverySelectionInput) {
  const std::string base = base_layer().signature();
  const std::vector<std::function<void(LayerSpec&)>> mutations = {
      [](LayerSpec& s) { s.num_heads = 16; },
      [](LayerSpec& s) { s.num_kv_heads = 4; },
      [](LayerSpec& s) { s.head_size = 64; },
      [](LayerSpec& s) { s.head_size_v = 64; },
      [](LayerSpec& s) { s.dtype = DType::kFloat16; },
      [](LayerSpec& s) { s.kv_cache_dtype = KvCacheDType::kFp8E4M3; },
      [](LayerSpec& s) { s.kv_scale_granularity = ScaleGranularity::kPerHead; },
      [](LayerSpec& s) { s.attn_type = AttentionType::kEncoderOnly; },
      [](LayerSpec& s) { s.sliding_window = 4096; },
      [](LayerSpec& s) { s.alibi = true; },
      [](LayerSpec& s) { s.sinks = true; },
      [](LayerSpec& s) { s.logits_soft_cap = 50.0; },
      [](LayerSpec& s) {
        s.mla = MlaDims{512, 128, 64, 128};
      },
      [](LayerSpec& s) { s.mla = MlaDims{512, 128, 64, 128, 0, true}; },
      [](LayerSpec& s) { s.block_size = 16; },
      [](LayerSpec& s) { s.mm_prefix = true; },
  };
  std::set<std::string> seen = {base};
  for (size_t i = 0; i < mutations.size(); ++i) {
    LayerSpec s = base_layer();
    mutations[i](s);
    EXPECT_TRUE(seen.insert(s.signature()).second) << "mutation " << i << ": " << s.signature();
  }
  LayerSpec w1 = base_layer(), w2 = base_layer();
  w1.sliding_window = 4096;
  w2.sliding_window = 512;
  EXPECT_NE(w1.signature(), w2.signature());
}

TEST(LayerSpec, MlaDimsAndHelpers) {
  MlaDims m{512, 128, 64, 128, 1536};
  EXPECT_EQ(m.decode_head_size(), 576);
  EXPECT_EQ(m.prefill_qk_head_size(), 192);
  LayerSpec s = base_layer();
  EXPECT_FALSE(s.is_mla());
  s.mla = m;
  EXPECT_TRUE(s.is_mla());
  EXPECT_FALSE(s.is_sparse());
  s.mla->sparse = true;
  EXPECT_TRUE(s.is_sparse());
  EXPECT_TRUE(s.causal());
  s.attn_type = AttentionType::kCross;
  EXPECT_FALSE(s.causal());
  EXPECT_EQ(base_layer().resolved_kv_dtype(), KvCacheDType::kBFloat16);
}

}  // namespace
}  // namespace attnkit
