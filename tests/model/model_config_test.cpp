// The config.json reader on every bundled config (golden per-layer summaries written from the
// configs and SOURCES.md by hand) and on inline and malformed configs.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "attnkit/error.hpp"
#include "attnkit/log.hpp"
#include "attnkit/model.hpp"
#include "model/state_bytes.hpp"

namespace attnkit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// One line per group of layers with the same description, in order of first appearance.
std::string describe(const LayerSpec& l) {
  std::string s = fmt::format("{} h{}/{} d{}/{}", to_string(l.attn_type), l.num_heads,
                              l.num_kv_heads, l.head_size, l.head_size_v);
  if (l.sliding_window) s += fmt::format(" win{}", *l.sliding_window);
  if (l.attention_chunk_size) s += fmt::format(" chunk{}", *l.attention_chunk_size);
  if (l.logits_soft_cap != 0.0) s += fmt::format(" cap{}", l.logits_soft_cap);
  if (l.sinks) s += " sinks";
  if (l.alibi) s += " alibi";
  if (l.mla) {
    s += fmt::format(" mla{}/{}/{}/{}/{}", l.mla->kv_lora_rank, l.mla->qk_nope_head_dim,
                     l.mla->qk_rope_head_dim, l.mla->v_head_dim, l.mla->q_lora_rank);
    if (l.mla->sparse) s += " sparse";
  }
  if (l.mm_prefix) s += " mm_prefix";
  if (l.kv_sharing_target_layer) s += fmt::format(" shares{}", *l.kv_sharing_target_layer);
  return s;
}

std::vector<std::string> summary(const ModelSpec& m) {
  std::vector<std::string> keys;
  std::map<std::string, int> counts;
  auto add = [&](const std::string& k) {
    if (counts[k]++ == 0) keys.push_back(k);
  };
  for (const auto& l : m.attention_layers) add(describe(l));
  for (const auto& s : m.state_layers) {
    add(fmt::format("{} {}B", to_string(s.kind), s.state_bytes_per_request));
  }
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(fmt::format("{}x {}", counts[k], k));
  return out;
}

std::vector<int> indices(const ModelSpec& m, bool (*pred)(const LayerSpec&)) {
  std::vector<int> out;
  for (const auto& l : m.attention_layers) {
    if (pred(l)) out.push_back(l.layer_index);
  }
  return out;
}

struct Golden {
  std::string name;
  std::string model_type;
  DType dtype;
  int num_layers;
  int64_t max_positions;
  std::vector<std::string> groups;
};

// Written from the config files and SOURCES.md, not from the reader's output.
const std::vector<Golden>& goldens() {
  static const std::vector<Golden> kGoldens = {
      {"deepseek-v3",
       "deepseek_v3",
       DType::kBFloat16,
       61,
       163840,
       {"61x decoder h128/1 d576/512 mla512/128/64/128/1536"}},
      {"glm-4.7-flash",
       "glm4_moe_lite",
       DType::kBFloat16,
       47,
       202752,
       {"47x decoder h20/1 d576/512 mla512/192/64/256/768"}},
      {"gemma-2-9b",
       "gemma2",
       DType::kBFloat16,
       42,
       8192,
       {"21x decoder h16/8 d256/256 win4096 cap50", "21x decoder h16/8 d256/256 cap50"}},
      {"gemma-3-1b-it",
       "gemma3_text",
       DType::kBFloat16,
       26,
       32768,
       {"22x decoder h4/1 d256/256 win512", "4x decoder h4/1 d256/256"}},
      // use_bidirectional_attention "vision": images attend both ways on the sliding layers only.
      {"gemma-4-26b-a4b",
       "gemma4",
       DType::kBFloat16,
       30,
       262144,
       {"25x decoder h16/8 d256/256 win1024 mm_prefix", "5x decoder h16/2 d512/512"}},
      {"gpt-oss-20b",
       "gpt_oss",
       DType::kBFloat16,
       24,
       131072,
       {"12x decoder h64/8 d64/64 win128 sinks", "12x decoder h64/8 d64/64 sinks"}},
      {"llama-3.1-8b-instruct",
       "llama",
       DType::kBFloat16,
       32,
       131072,
       {"32x decoder h32/8 d128/128"}},
      {"llama-3.1-8b", "llama", DType::kBFloat16, 32, 131072, {"32x decoder h32/8 d128/128"}},
      // No layer_types or no_rope_layers: Llama4TextConfig's no_rope_layer_interval 4 makes
      // layers 3, 7, ..., 47 NoPE (full attention) and the other 36 chunked.
      {"llama-4-scout-17b-16e-instruct",
       "llama4",
       DType::kBFloat16,
       48,
       10485760,
       {"36x decoder h40/8 d128/128 chunk8192", "12x decoder h40/8 d128/128"}},
      {"llama-3.2-1b", "llama", DType::kBFloat16, 16, 131072, {"16x decoder h32/8 d64/64"}},
      {"mixtral-8x7b", "mixtral", DType::kBFloat16, 32, 32768, {"32x decoder h32/8 d128/128"}},
      // conv 3 * (64*64 + 2*8*128) * 2 B (bf16) + ssm 64*64*128 * 4 B (mamba_ssm_cache_dtype
      // float32) = 36864 + 2097152.
      // 22 layers, every third from layer 0 global (8), the rest local: |q - k| <= 128 / 2.
      {"modernbert-base",
       "modernbert",
       DType::kFloat32,
       22,
       8192,
       {"8x encoder_only h12/12 d64/64", "14x encoder_only h12/12 d64/64 win65"}},
      {"nemotron-3-nano-30b-a3b",
       "nemotron_h",
       DType::kBFloat16,
       52,
       262144,
       {"6x decoder h32/2 d128/128", "23x mamba 2134016B"}},
      // text_config: 2048 / 8 = 256 (Gemma default head_dim), MQA, Gemma max positions 8192.
      {"paligemma-3b-pt-224",
       "paligemma",
       DType::kFloat32,
       18,
       8192,
       {"18x decoder h8/1 d256/256 mm_prefix"}},
      {"phi-3.5-mini-instruct",
       "phi3",
       DType::kBFloat16,
       32,
       131072,
       {"32x decoder h32/32 d96/96"}},
      {"qwen3-0.6b", "qwen3", DType::kBFloat16, 28, 40960, {"28x decoder h16/8 d128/128"}},
      {"qwen3-8b", "qwen3", DType::kBFloat16, 36, 40960, {"36x decoder h32/8 d128/128"}},
      {"snowflake-arctic-embed-m",
       "bert",
       DType::kFloat32,
       12,
       512,
       {"12x encoder_only h12/12 d64/64"}},
      {"t5-small",
       "t5",
       DType::kFloat32,
       12,
       512,
       {"6x encoder h8/8 d64/64", "6x decoder h8/8 d64/64", "6x encoder_decoder h8/8 d64/64"}},
  };
  return kGoldens;
}

TEST(ModelBundled, EveryBundledConfigHasAGolden) {
  ASSERT_FALSE(models_dir().empty());
  std::vector<std::string> expected;
  for (const auto& g : goldens()) expected.push_back(g.name);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(bundled_model_names(), expected);
}

TEST(ModelBundled, GoldenSummaries) {
  for (const auto& g : goldens()) {
    SCOPED_TRACE(g.name);
    const ModelSpec m = load_model(g.name);
    EXPECT_EQ(m.name, g.name);
    EXPECT_EQ(m.model_type, g.model_type);
    EXPECT_EQ(m.dtype, g.dtype);
    EXPECT_EQ(m.num_layers, g.num_layers);
    EXPECT_EQ(m.max_position_embeddings, g.max_positions);
    EXPECT_EQ(summary(m), g.groups);
    EXPECT_THAT(m.source, HasSubstr(g.name + ".json"));
    for (const auto& l : m.attention_layers) {
      EXPECT_EQ(l.dtype, m.dtype);
      EXPECT_EQ(l.kv_cache_dtype, KvCacheDType::kAuto);
      EXPECT_FALSE(l.block_size);
    }
    EXPECT_TRUE(std::is_sorted(
        m.attention_layers.begin(), m.attention_layers.end(),
        [](const LayerSpec& a, const LayerSpec& b) { return a.layer_index < b.layer_index; }));
  }
}

bool sliding(const LayerSpec& l) { return l.sliding_window.has_value(); }
bool full(const LayerSpec& l) { return !l.sliding_window.has_value(); }

TEST(ModelBundled, Gemma2AlternatesStartingWithSliding) {
  const ModelSpec m = load_model("gemma-2-9b");
  const auto s = indices(m, sliding);
  ASSERT_EQ(s.size(), 21u);
  for (size_t k = 0; k < s.size(); ++k) EXPECT_EQ(s[k], int(2 * k));
  EXPECT_EQ(m.attention_layers[0].logits_soft_cap, 50.0);  // not final_logit_softcapping (30)
}

TEST(ModelBundled, Gemma3EverySixthLayerFull) {
  EXPECT_THAT(indices(load_model("gemma-3-1b-it"), full), ElementsAre(5, 11, 17, 23));
}

TEST(ModelBundled, Gemma4FullLayersUseGlobalDims) {
  const ModelSpec m = load_model("gemma-4-26b-a4b");
  EXPECT_THAT(indices(m, full), ElementsAre(5, 11, 17, 23, 29));
  for (const auto& l : m.attention_layers) {
    EXPECT_EQ(l.head_size, l.sliding_window ? 256 : 512);
    EXPECT_EQ(l.num_kv_heads, l.sliding_window ? 8 : 2);
    EXPECT_EQ(l.logits_soft_cap, 0.0);  // only final_logit_softcapping is set
  }
}

TEST(ModelBundled, PrefixLmModelsKnowTheirImageTokens) {
  const ModelSpec m = load_model("paligemma-3b-pt-224");
  EXPECT_EQ(m.mm_item_tokens, 256);  // text_config.num_image_tokens
  EXPECT_TRUE(m.notes.empty());
  EXPECT_EQ(load_model("qwen3-0.6b").mm_item_tokens, 0);
  const ModelSpec g = parse_model_config(
      R"({"model_type":"gemma3","mm_tokens_per_image":64,"text_config":{"model_type":)"
      R"("gemma3_text","hidden_size":64,"num_attention_heads":2,"num_key_value_heads":1,)"
      R"("num_hidden_layers":1}})",
      "inline.json");
  EXPECT_EQ(g.mm_item_tokens, 64);
  const ModelSpec u = parse_model_config(
      R"({"model_type":"paligemma","text_config":{"hidden_size":64,"num_attention_heads":2,)"
      R"("num_hidden_layers":1}})",
      "inline.json");
  EXPECT_EQ(u.mm_item_tokens, 256);  // assumed, and said so
  ASSERT_EQ(u.notes.size(), 1u);
  EXPECT_THAT(u.notes[0], HasSubstr("taken as 256 image tokens"));
}

// Gemma 3 4B's published config.json leaves the head counts to Gemma3TextConfig (8 query heads
// over 4 KV heads, head_dim 256); every layer of it is a PrefixLM layer, five sliding (window
// 1024) to one full.
TEST(ModelBundled, Gemma3MultimodalTakesTextConfigDefaults) {
  const ModelSpec m = parse_model_config(
      R"({"architectures":["Gemma3ForConditionalGeneration"],"mm_tokens_per_image":256,)"
      R"("model_type":"gemma3","text_config":{"hidden_size":2560,"intermediate_size":10240,)"
      R"("model_type":"gemma3_text","num_hidden_layers":34,"rope_scaling":{"factor":8.0,)"
      R"("rope_type":"linear"},"sliding_window":1024},"torch_dtype":"bfloat16",)"
      R"("vision_config":{"hidden_size":1152,"image_size":896,"model_type":"siglip_vision_model",)"
      R"("num_attention_heads":16,"num_hidden_layers":27,"patch_size":14}})",
      "gemma-3-4b-it.json");
  EXPECT_EQ(m.mm_item_tokens, 256);
  ASSERT_EQ(m.attention_layers.size(), 34u);
  int full = 0;
  for (const auto& l : m.attention_layers) {
    EXPECT_EQ(l.num_heads, 8);
    EXPECT_EQ(l.num_kv_heads, 4);
    EXPECT_EQ(l.head_size, 256);
    EXPECT_TRUE(l.mm_prefix);
    if (!l.sliding_window) {
      ++full;
      EXPECT_EQ(l.layer_index % 6, 5) << l.layer_index;
    } else {
      EXPECT_EQ(*l.sliding_window, 1024);
    }
  }
  EXPECT_EQ(full, 5);
}

// Gemma 4 with use_bidirectional_attention "vision": an image's soft tokens see each other on the
// sliding layers only (transformers' create_causal_mask_mapping); full layers stay causal. Any
// other value (or a boolean, which makes the model encoder-only) sets no PrefixLM layer.
TEST(ModelBundled, Gemma4VisionBidirectionalOnSlidingLayers) {
  const ModelSpec m = load_model("gemma-4-26b-a4b");
  EXPECT_EQ(m.mm_item_tokens, 280);  // vision_soft_tokens_per_image
  int sliding = 0;
  for (const auto& l : m.attention_layers) {
    EXPECT_EQ(l.mm_prefix, l.sliding_window.has_value()) << "layer " << l.layer_index;
    sliding += l.sliding_window.has_value();
  }
  EXPECT_EQ(sliding, 25);
  auto with = [](const char* bidi) {
    return parse_model_config(
        std::string(R"({"model_type":"gemma4","text_config":{"model_type":"gemma4_text",)"
                    R"("hidden_size":64,"num_attention_heads":2,"num_key_value_heads":1,)"
                    R"("head_dim":32,"num_hidden_layers":2,"sliding_window":16,)"
                    R"("layer_types":["sliding_attention","full_attention"],)"
                    R"("use_bidirectional_attention":)") +
            bidi + "}}",
        "inline.json");
  };
  const ModelSpec v = with(R"("vision")");
  ASSERT_EQ(v.attention_layers.size(), 2u);
  EXPECT_TRUE(v.attention_layers[0].mm_prefix);
  EXPECT_FALSE(v.attention_layers[1].mm_prefix);
  EXPECT_EQ(v.mm_item_tokens, 256);  // no count in the config: assumed, and said so
  for (const char* other : {"null", R"("all")"}) {
    const ModelSpec o = with(other);
    for (const auto& l : o.attention_layers) EXPECT_FALSE(l.mm_prefix) << other;
    EXPECT_EQ(o.mm_item_tokens, 0) << other;
  }
  const ModelSpec unknown = with(R"("all")");  // a string it does not know: causal, said so
  ASSERT_EQ(unknown.notes.size(), 1u);
  EXPECT_THAT(unknown.notes[0], HasSubstr("'all', a value attnkit does not know"));
}

TEST(ModelBundled, Llama4EveryFourthLayerFull) {
  const ModelSpec m = load_model("llama-4-scout-17b-16e-instruct");
  std::vector<int> full_layers;
  for (const auto& l : m.attention_layers)
    if (!l.attention_chunk_size) full_layers.push_back(l.layer_index);
  EXPECT_THAT(full_layers, ElementsAre(3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47));
  EXPECT_TRUE(m.notes.empty());  // llama4 is a type attnkit knows
}

TEST(ModelBundled, GptOssOddLayersFull) {
  const ModelSpec m = load_model("gpt-oss-20b");
  EXPECT_THAT(indices(m, full), ElementsAre(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23));
}

TEST(ModelBundled, NemotronHybridPattern) {
  const ModelSpec m = load_model("nemotron-3-nano-30b-a3b");
  // '*' positions of MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME.
  EXPECT_THAT(indices(m, full), ElementsAre(5, 12, 19, 26, 33, 42));
  const std::string pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
  std::vector<int> mamba;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == 'M') mamba.push_back(int(i));
  }
  std::vector<int> got;
  for (const auto& s : m.state_layers) {
    got.push_back(s.layer_index);
    EXPECT_EQ(s.kind, StateKind::kMamba);
    EXPECT_EQ(s.dtype, DType::kBFloat16);
  }
  EXPECT_EQ(got, mamba);
}

TEST(ModelBundled, T5LayerNumbering) {
  const ModelSpec m = load_model("t5-small");
  EXPECT_TRUE(m.is_encoder_decoder);
  ASSERT_EQ(m.attention_layers.size(), 18u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(m.attention_layers[i].layer_index, i);
    EXPECT_EQ(m.attention_layers[i].attn_type, AttentionType::kEncoder);
    EXPECT_FALSE(m.attention_layers[i].causal());
  }
  for (int j = 0; j < 6; ++j) {
    const LayerSpec& self = m.attention_layers[6 + j];
    const LayerSpec& cross = m.attention_layers[12 + j];
    EXPECT_EQ(self.layer_index, 6 + j);
    EXPECT_EQ(self.attn_type, AttentionType::kDecoder);
    EXPECT_TRUE(self.causal());
    EXPECT_EQ(cross.layer_index, 12 + j);  // cross-attention modules follow the 12 layers
    EXPECT_EQ(cross.attn_type, AttentionType::kCross);
  }
}

TEST(ModelBundled, EncoderOnlyIsNonCausal) {
  for (const auto& l : load_model("snowflake-arctic-embed-m").attention_layers) {
    EXPECT_FALSE(l.causal());
  }
}

// ModernBERT: layers 0, 3, .., 21 see every key; the others the keys within 64 on either side
// (window 65: 64 keys each side besides the query's own). A transformers v5 config names the
// layers in layer_types instead.
TEST(ModelBundled, ModernBertLocalLayersHaveASymmetricWindow) {
  const ModelSpec m = load_model("modernbert-base");
  for (const auto& l : m.attention_layers) {
    EXPECT_EQ(l.attn_type, AttentionType::kEncoderOnly);
    EXPECT_FALSE(l.causal());
    EXPECT_EQ(l.sliding_window, l.layer_index % 3 == 0 ? std::nullopt : std::optional<int>(65))
        << "layer " << l.layer_index;
  }
  const ModelSpec v5 = parse_model_config(
      R"({"model_type":"modernbert","hidden_size":768,"num_attention_heads":12,)"
      R"("num_hidden_layers":4,"local_attention":128,"global_attn_every_n_layers":3,)"
      R"("layer_types":["full_attention","sliding_attention","full_attention","sliding_attention"]})",
      "modernbert-v5.json");
  ASSERT_EQ(v5.attention_layers.size(), 4u);
  EXPECT_EQ(indices(v5, sliding), (std::vector<int>{1, 3}));
  EXPECT_EQ(v5.attention_layers[1].sliding_window, 65);
  try {
    parse_model_config(R"({"model_type":"modernbert","hidden_size":768,"num_attention_heads":12,)"
                       R"("num_hidden_layers":4,"global_attn_every_n_layers":3})",
                       "no-local.json");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("local_attention"));
  }
}

TEST(ModelBundled, MlaPrefillDims) {
  const LayerSpec l = load_model("deepseek-v3").attention_layers.at(0);
  ASSERT_TRUE(l.is_mla());
  EXPECT_EQ(l.mla->decode_head_size(), 576);
  EXPECT_EQ(l.mla->prefill_qk_head_size(), 192);
  EXPECT_FALSE(l.is_sparse());
}

// The softmax scale each bundled model's attention code uses (vLLM's Attention(scale=...)).
TEST(ModelBundled, SoftmaxScaleAsTheModelsAttentionCode) {
  // DeepSeek-V3's YaRN (factor 40, mscale_all_dim 1): mscale^2 / sqrt(128 + 64) = 0.1352...
  const double mscale = 0.1 * std::log(40.0) + 1.0;
  for (const auto& l : load_model("deepseek-v3").attention_layers) {
    ASSERT_TRUE(l.softmax_scale);
    EXPECT_NEAR(l.scale(), mscale * mscale / std::sqrt(192.0), 1e-15);
    EXPECT_NEAR(l.scale(), 0.13523377886, 1e-10);
  }
  // Gemma 4 normalizes q and k and takes 1.0 on both layer kinds (heads 256 and 512); T5 too.
  for (const char* name : {"gemma-4-26b-a4b", "t5-small"})
    for (const auto& l : load_model(name).attention_layers) {
      SCOPED_TRACE(name);
      EXPECT_EQ(l.softmax_scale, 1.0);
      EXPECT_THAT(l.signature(), HasSubstr("|scale1"));
    }
  // query_pre_attn_scalar 256 over heads of 256: the default, kept as none (plans unchanged).
  for (const char* name : {"gemma-2-9b", "gemma-3-1b-it", "qwen3-8b", "glm-4.7-flash",
                           "llama-4-scout-17b-16e-instruct", "gpt-oss-20b"})
    for (const auto& l : load_model(name).attention_layers) {
      SCOPED_TRACE(name);
      EXPECT_FALSE(l.softmax_scale);
      EXPECT_EQ(l.scale(),
                1.0 / std::sqrt(double(l.is_mla() ? l.mla->prefill_qk_head_size() : l.head_size)));
    }
}

TEST(ModelFiles, GlmStyleMlaFromDataFile) {
  const ModelSpec m = load_model(ATTNKIT_SOURCE_DIR "/tests/model/data/glm-mla.json");
  EXPECT_EQ(m.name, "glm-mla");
  EXPECT_THAT(summary(m), ElementsAre("47x decoder h20/1 d576/512 mla512/192/64/256/768"));
  EXPECT_EQ(m.attention_layers[0].mla->prefill_qk_head_size(), 256);
}

TEST(ModelFiles, ShortNameIsCaseInsensitive) {
  EXPECT_EQ(load_model("Gemma-2-9B").name, "gemma-2-9b");
}

TEST(ModelFiles, SnapshotFolderIsNamedAfterTheFolder) {
  const auto dir = std::filesystem::temp_directory_path() / "attnkit_h2_test" / "tiny-llama";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json")
      << R"({"model_type":"llama","hidden_size":256,"num_attention_heads":4,)"
         R"("num_hidden_layers":2})";
  const ModelSpec m = load_model(dir.string());
  EXPECT_EQ(m.name, "tiny-llama");
  EXPECT_THAT(summary(m), ElementsAre("2x decoder h4/4 d64/64"));
  std::filesystem::remove_all(dir.parent_path());
}

TEST(ModelFiles, ModelsDirFromEnvironment) {
  const auto dir = std::filesystem::temp_directory_path() / "attnkit_h2_models";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "only-one.json")
      << R"({"model_type":"llama","hidden_size":64,"num_attention_heads":2,)"
         R"("num_hidden_layers":1})";
  struct RestoreEnv {
    std::optional<std::string> saved;
    RestoreEnv() {
      if (const char* old = std::getenv("ATTNKIT_MODELS_DIR")) saved = old;
    }
    ~RestoreEnv() {
      if (saved) {
        setenv("ATTNKIT_MODELS_DIR", saved->c_str(), 1);
      } else {
        unsetenv("ATTNKIT_MODELS_DIR");
      }
    }
  } restore;
  setenv("ATTNKIT_MODELS_DIR", dir.c_str(), 1);
  EXPECT_EQ(models_dir(), dir.string());
  EXPECT_THAT(bundled_model_names(), ElementsAre("only-one"));
  EXPECT_EQ(load_model("only-one").num_layers, 1);
  try {
    load_model("llama-3.1-8b");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("only-one"));
  }
  std::filesystem::remove_all(dir);
}

// ---- inline configs ----------------------------------------------------------------------------

ModelSpec parse(const std::string& text, const ModelLoadOptions& o = {}) {
  return parse_model_config(text, "inline.json", o);
}

TEST(ModelInline, MhaWhenKvHeadsAbsentAndHeadDimDerived) {
  const ModelSpec m = parse(
      R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"num_hidden_layers":2})");
  EXPECT_THAT(summary(m), ElementsAre("2x decoder h32/32 d128/128"));
  EXPECT_EQ(m.dtype, DType::kBFloat16);  // no torch_dtype: bf16
  EXPECT_EQ(m.name, "inline");
}

TEST(ModelInline, MistralWindowOnEveryLayer) {
  const ModelSpec m =
      parse(R"({"model_type":"mistral","hidden_size":4096,"num_attention_heads":32,)"
            R"("num_key_value_heads":8,"num_hidden_layers":32,"sliding_window":4096,)"
            R"("max_position_embeddings":32768,"torch_dtype":"float16"})");
  EXPECT_THAT(summary(m), ElementsAre("32x decoder h32/8 d128/128 win4096"));
  EXPECT_EQ(m.dtype, DType::kFloat16);
}

TEST(ModelInline, Qwen2MaxWindowLayers) {
  const ModelSpec m =
      parse(R"({"model_type":"qwen2","hidden_size":1024,"num_attention_heads":8,)"
            R"("num_key_value_heads":2,"num_hidden_layers":6,"sliding_window":256,)"
            R"("use_sliding_window":true,"max_window_layers":4,"max_position_embeddings":4096})");
  EXPECT_THAT(indices(m, sliding), ElementsAre(4, 5));
}

TEST(ModelInline, QwenWindowDisabled) {
  const ModelSpec m =
      parse(R"({"model_type":"qwen2","hidden_size":1024,"num_attention_heads":8,)"
            R"("num_hidden_layers":2,"sliding_window":256,"use_sliding_window":false})");
  EXPECT_THAT(indices(m, sliding), ElementsAre());
}

// Sparse text configs take their config class's defaults, as transformers (and so vLLM) fills
// them: llava-1.5-7b's text_config names no size (LlamaConfig: 4096 wide, 32 heads, 32 layers),
// llava-v1.6-mistral's names the KV heads and a null window (MistralConfig's 4096 window stays off;
// absent, it applies); a Qwen2 window is off unless use_sliding_window switches it on.
TEST(ModelInline, TransformersDefaultsFillSparseTextConfigs) {
  const ModelSpec llava = parse(
      R"({"architectures":["LlavaForConditionalGeneration"],"model_type":"llava",)"
      R"("text_config":{"architectures":["LlamaForCausalLM"],"max_position_embeddings":4096,)"
      R"("model_type":"llama","rms_norm_eps":1e-05,"torch_dtype":"float16","vocab_size":32064},)"
      R"("vision_config":{"hidden_size":1024,"model_type":"clip_vision_model",)"
      R"("num_attention_heads":16,"num_hidden_layers":24},"torch_dtype":"float16"})");
  EXPECT_THAT(summary(llava), ElementsAre("32x decoder h32/32 d128/128"));
  EXPECT_EQ(llava.max_position_embeddings, 4096);
  auto mistral = [](const std::string& window) {
    return parse(
        R"({"architectures":["LlavaNextForConditionalGeneration"],"model_type":"llava_next",)"
        R"("text_config":{"architectures":["MistralForCausalLM"],"intermediate_size":14336,)"
        R"("max_position_embeddings":32768,"model_type":"mistral","num_key_value_heads":8)" +
        window + R"(,"torch_dtype":"bfloat16"},"torch_dtype":"bfloat16"})");
  };
  EXPECT_THAT(summary(mistral(R"(,"sliding_window":null)")),
              ElementsAre("32x decoder h32/8 d128/128"));
  EXPECT_THAT(summary(mistral("")), ElementsAre("32x decoder h32/8 d128/128 win4096"));
  const std::string qwen = R"({"model_type":"qwen2","hidden_size":1024,"num_attention_heads":8,)"
                           R"("num_hidden_layers":2,"sliding_window":256)";
  EXPECT_THAT(indices(parse(qwen + "}"), sliding), ElementsAre());
  EXPECT_THAT(
      indices(parse(qwen + R"(,"use_sliding_window":true,"max_window_layers":1})"), sliding),
      ElementsAre(1));
}

// InternVL keeps its language model under llm_config, which vLLM remaps to text_config when the
// config has none (_CONFIG_ATTRS_MAPPING): InternVL2.5-8B's InternLM2 (GQA 32/8, d128),
// InternVL3-8B's Qwen2 (28/4, d128); the InternViT tower's heads are not the language model's.
// Its dtype and errors come from llm_config too; a text_config, where present, wins.
TEST(ModelInline, InternVlReadsItsLlmConfig) {
  const std::string vision = R"("vision_config":{"architectures":["InternVisionModel"],)"
                             R"("hidden_size":1024,"num_attention_heads":16,)"
                             R"("num_hidden_layers":24,"model_type":"intern_vit_6b"})";
  const ModelSpec v25 =
      parse(R"({"architectures":["InternVLChatModel"],"model_type":"internvl_chat",)" + vision +
            R"(,"llm_config":{"architectures":["InternLM2ForCausalLM"],"model_type":"internlm2",)"
            R"("hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,)"
            R"("num_hidden_layers":32,"max_position_embeddings":32768,"torch_dtype":"float16"}})");
  EXPECT_THAT(summary(v25), ElementsAre("32x decoder h32/8 d128/128"));
  EXPECT_EQ(v25.max_position_embeddings, 32768);
  EXPECT_EQ(v25.config_dtype, DType::kFloat16);
  EXPECT_FALSE(v25.pooling);  // InternVLChatModel generates (vLLM's registry)
  EXPECT_TRUE(v25.notes.empty()) << v25.notes.front();
  const ModelSpec v3 =
      parse(R"({"architectures":["InternVLChatModel"],"model_type":"internvl_chat",)" + vision +
            R"(,"llm_config":{"architectures":["Qwen2ForCausalLM"],"model_type":"qwen2",)"
            R"("hidden_size":3584,"num_attention_heads":28,"num_key_value_heads":4,)"
            R"("num_hidden_layers":28,"max_position_embeddings":32768,"sliding_window":131072,)"
            R"("use_sliding_window":false},"torch_dtype":"bfloat16"})");
  EXPECT_THAT(summary(v3), ElementsAre("28x decoder h28/4 d128/128"));
  try {
    parse(
        R"({"model_type":"internvl_chat","llm_config":{"model_type":"internlm2","hidden_size":64}})");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("llm_config.num_hidden_layers"));
  }
  try {
    parse(R"({"model_type":"internvl_chat","llm_config":5})");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("field 'llm_config' must be an object"));
  }
  const ModelSpec both =
      parse(R"({"model_type":"x","llm_config":{"hidden_size":64,"num_attention_heads":1,)"
            R"("num_hidden_layers":1},"text_config":{"model_type":"llama","hidden_size":1024,)"
            R"("num_attention_heads":8,"num_hidden_layers":2}})");
  EXPECT_THAT(summary(both), ElementsAre("2x decoder h8/8 d128/128"));
}

// Qwen2.5-Omni and Qwen3-Omni keep the language model in the thinker (their get_text_config
// returns thinker_config.text_config, which is what vLLM plans); the talker and the audio and
// vision encoders are not it. Qwen2.5-Omni-7B: Qwen2.5-7B's 28/4 at d128, its window off.
TEST(ModelInline, QwenOmniReadsItsThinkersTextConfig) {
  const ModelSpec omni =
      parse(R"({"architectures":["Qwen2_5OmniModel"],"model_type":"qwen2_5_omni",)"
            R"("thinker_config":{"model_type":"qwen2_5_omni_thinker",)"
            R"("audio_config":{"encoder_layers":32,"encoder_attention_heads":20,"d_model":1280},)"
            R"("text_config":{"model_type":"qwen2_5_omni_text","hidden_size":3584,)"
            R"("num_attention_heads":28,"num_key_value_heads":4,"num_hidden_layers":28,)"
            R"("max_position_embeddings":32768,"sliding_window":32768,"use_sliding_window":false,)"
            R"("torch_dtype":"float16"}},"talker_config":{"hidden_size":896,)"
            R"("num_attention_heads":12,"num_key_value_heads":4,"num_hidden_layers":24}})");
  EXPECT_THAT(summary(omni), ElementsAre("28x decoder h28/4 d128/128"));
  EXPECT_EQ(omni.config_dtype, DType::kFloat16);
  EXPECT_FALSE(omni.pooling);
  EXPECT_TRUE(omni.notes.empty()) << omni.notes.front();
  const ModelSpec omni3 =
      parse(R"({"architectures":["Qwen3OmniMoeForConditionalGeneration"],)"
            R"("model_type":"qwen3_omni_moe","thinker_config":{"text_config":{)"
            R"("model_type":"qwen3_omni_moe_text","hidden_size":2048,"num_attention_heads":32,)"
            R"("num_key_value_heads":4,"head_dim":128,"num_hidden_layers":48,)"
            R"("max_position_embeddings":65536}}})");
  EXPECT_THAT(summary(omni3), ElementsAre("48x decoder h32/4 d128/128"));
  try {
    parse(R"({"model_type":"qwen2_5_omni","thinker_config":{"text_config":{"hidden_size":64}}})");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("thinker_config.text_config.num_hidden_layers"));
  }
}

TEST(ModelInline, AlibiModels) {
  const ModelSpec mpt =
      parse(R"({"model_type":"mpt","d_model":4096,"n_heads":32,"n_layers":2,"max_seq_len":2048,)"
            R"("attn_config":{"alibi":true,"sliding_window_size":-1}})");
  EXPECT_THAT(summary(mpt), ElementsAre("2x decoder h32/32 d128/128 alibi"));
  EXPECT_EQ(mpt.max_position_embeddings, 2048);
  const ModelSpec bloom = parse(R"({"model_type":"bloom","n_embed":1024,"n_head":16,"n_layer":3})");
  EXPECT_THAT(summary(bloom), ElementsAre("3x decoder h16/16 d64/64 alibi"));
  const ModelSpec falcon =
      parse(R"({"model_type":"falcon","hidden_size":2048,"num_attention_heads":32,)"
            R"("num_hidden_layers":2,"alibi":true,"multi_query":false})");
  EXPECT_THAT(summary(falcon), ElementsAre("2x decoder h32/32 d64/64 alibi"));
  const ModelSpec falcon7b =
      parse(R"({"model_type":"falcon","hidden_size":4544,"num_attention_heads":71,)"
            R"("num_hidden_layers":2,"alibi":false,"multi_query":true})");
  EXPECT_THAT(summary(falcon7b), ElementsAre("2x decoder h71/1 d64/64"));
}

// OLMo 3 (vLLM's olmo2.py: the window on its "sliding_attention" layers): Olmo-3-7B's attention
// fields, three sliding layers of 4096 keys for every full one; OLMo 2 has no window.
TEST(ModelInline, Olmo) {
  const ModelSpec o3 =
      parse(R"({"architectures":["Olmo3ForCausalLM"],"model_type":"olmo3","hidden_size":4096,)"
            R"("num_attention_heads":32,"num_key_value_heads":32,"num_hidden_layers":8,)"
            R"("max_position_embeddings":65536,"sliding_window":4096,"layer_types":[)"
            R"("sliding_attention","sliding_attention","sliding_attention","full_attention",)"
            R"("sliding_attention","sliding_attention","sliding_attention","full_attention"]})");
  EXPECT_THAT(indices(o3, sliding), ElementsAre(0, 1, 2, 4, 5, 6));
  EXPECT_TRUE(o3.notes.empty()) << o3.notes.front();
  const ModelSpec o2 =
      parse(R"({"architectures":["Olmo2ForCausalLM"],"model_type":"olmo2","hidden_size":4096,)"
            R"("num_attention_heads":32,"num_key_value_heads":32,"num_hidden_layers":4,)"
            R"("max_position_embeddings":4096})");
  EXPECT_THAT(summary(o2), ElementsAre("4x decoder h32/32 d128/128"));
  EXPECT_TRUE(o2.notes.empty()) << o2.notes.front();
}

// The model dtype rule (ModelLoadOptions::dtype_rule) sees the config's dtype (the text config's
// first), whether the model pools (encoder-only) and --dtype; its choice and note are the model's.
TEST(ModelInline, DtypeRuleSeesTheConfigAndDecides) {
  std::vector<ModelDtypeQuery> seen;
  ModelLoadOptions o;
  o.dtype_rule = [&](const ModelDtypeQuery& q) {
    seen.push_back(q);
    return ModelDtype{DType::kFloat16, q.model_type == "bert" ? "pooled in float16" : ""};
  };
  const ModelSpec bert =
      parse(R"({"model_type":"bert","hidden_size":768,"num_attention_heads":12,)"
            R"("num_hidden_layers":2,"max_position_embeddings":512,"torch_dtype":"float32"})",
            o);
  EXPECT_EQ(bert.dtype, DType::kFloat16);
  EXPECT_EQ(bert.config_dtype, DType::kFloat32);
  ASSERT_EQ(bert.notes.size(), 1u);
  EXPECT_THAT(bert.notes[0], HasSubstr(": pooled in float16"));
  o.dtype = DType::kBFloat16;
  const ModelSpec gemma = parse(
      R"({"model_type":"gemma3","torch_dtype":"float32","text_config":{"model_type":"gemma3_text",)"
      R"("hidden_size":1152,"num_attention_heads":4,"num_key_value_heads":1,"head_dim":256,)"
      R"("num_hidden_layers":2,"max_position_embeddings":32768,"torch_dtype":"bfloat16"}})",
      o);
  for (const std::string& n : gemma.notes) EXPECT_THAT(n, Not(HasSubstr("float16")));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].model_type, "bert");
  EXPECT_TRUE(seen[0].pooling);
  EXPECT_EQ(seen[0].config_dtype, DType::kFloat32);
  EXPECT_FALSE(seen[0].requested);
  EXPECT_EQ(seen[1].model_type, "gemma3");
  EXPECT_FALSE(seen[1].pooling);
  EXPECT_EQ(seen[1].config_dtype, DType::kFloat32);  // the top level's first, as vLLM reads it
  EXPECT_EQ(seen[1].requested, DType::kBFloat16);
  // Without a top-level dtype, the text config's; without that, the vision config's.
  const std::string layers =
      R"("hidden_size":1152,"num_attention_heads":4,"num_key_value_heads":1,"head_dim":256,)"
      R"("num_hidden_layers":2,"max_position_embeddings":32768)";
  EXPECT_EQ(parse(R"({"model_type":"gemma3","text_config":{"model_type":"gemma3_text",)" + layers +
                  R"(,"torch_dtype":"bfloat16"},"vision_config":{"torch_dtype":"float32"}})")
                .config_dtype,
            DType::kBFloat16);
  EXPECT_EQ(parse(R"({"model_type":"gemma3","text_config":{"model_type":"gemma3_text",)" + layers +
                  R"(},"vision_config":{"dtype":"float16"}})")
                .config_dtype,
            DType::kFloat16);
  // Without a rule: --dtype, else the config's, else bfloat16.
  EXPECT_EQ(parse(R"({"model_type":"llama","hidden_size":256,"num_attention_heads":4,)"
                  R"("num_hidden_layers":1,"max_position_embeddings":64})")
                .dtype,
            DType::kBFloat16);
}

// Qwen2-VL / Qwen2.5-VL / Qwen3-VL: the language model's attention is Qwen2's (M-RoPE moves the
// positions, not the mask). Qwen2.5-VL-3B-Instruct's fields, flat (transformers before 4.52) and
// with the text_config later versions write; its window is off (use_sliding_window false).
TEST(ModelInline, QwenVl) {
  const std::string fields =
      R"("hidden_size":2048,"num_attention_heads":16,"num_key_value_heads":2,)"
      R"("num_hidden_layers":36,"max_position_embeddings":128000,"max_window_layers":70,)"
      R"("sliding_window":32768,"use_sliding_window":false,"torch_dtype":"bfloat16")";
  const ModelSpec flat = parse(R"({"architectures":["Qwen2_5_VLForConditionalGeneration"],)"
                               R"("model_type":"qwen2_5_vl",)" +
                               fields + "}");
  EXPECT_THAT(summary(flat), ElementsAre("36x decoder h16/2 d128/128"));
  EXPECT_TRUE(flat.notes.empty()) << flat.notes.front();
  const ModelSpec nested =
      parse(R"({"model_type":"qwen2_5_vl",)" + fields +
            R"(,"text_config":{"model_type":"qwen2_5_vl_text",)" + fields + "}}");
  EXPECT_THAT(summary(nested), ElementsAre("36x decoder h16/2 d128/128"));
  EXPECT_TRUE(nested.notes.empty()) << nested.notes.front();
}

// Baichuan's configs name no position scheme; the architecture and hidden size decide (vLLM's
// baichuan.py). The attention fields of Baichuan2-13B-Chat's, Baichuan2-7B-Chat's and
// Baichuan-7B's published configs.
TEST(ModelInline, BaichuanAlibiByArchitecture) {
  const std::string b13 =
      R"({"architectures":["BaichuanForCausalLM"],"model_type":"baichuan","hidden_size":5120,)"
      R"("num_attention_heads":40,"num_hidden_layers":40,"model_max_length":4096})";
  const ModelSpec m13 = parse(b13);
  EXPECT_THAT(summary(m13), ElementsAre("40x decoder h40/40 d128/128 alibi"));
  EXPECT_EQ(m13.max_position_embeddings, 4096);
  EXPECT_TRUE(m13.notes.empty()) << m13.notes.front();  // a known type: no "llama way" note
  const ModelSpec m7 = parse(
      R"({"architectures":["BaichuanForCausalLM"],"model_type":"baichuan","hidden_size":4096,)"
      R"("num_attention_heads":32,"num_hidden_layers":32,"model_max_length":4096})");
  EXPECT_THAT(summary(m7), ElementsAre("32x decoder h32/32 d128/128"));
  const ModelSpec v1 = parse(
      R"({"architectures":["BaiChuanForCausalLM"],"model_type":"baichuan","hidden_size":4096,)"
      R"("num_attention_heads":32,"num_hidden_layers":32,"max_position_embeddings":4096})");
  EXPECT_THAT(summary(v1), ElementsAre("32x decoder h32/32 d128/128"));
}

TEST(ModelInline, Qwen3NextLinearAttention) {
  // conv 3 * (2*16*128 + 32*128) * 2 B + temporal 32*128*128 * 2 B (bf16, ssm dtype auto).
  const std::string common =
      R"("hidden_size":2048,"num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,)"
      R"("num_hidden_layers":8,"linear_num_key_heads":16,"linear_num_value_heads":32,)"
      R"("linear_key_head_dim":128,"linear_value_head_dim":128,"linear_conv_kernel_dim":4,)"
      R"("torch_dtype":"bfloat16")";
  const ModelSpec by_types =
      parse(R"({"model_type":"qwen3_next",)" + common +
            R"(,"layer_types":["linear_attention","linear_attention","linear_attention",)"
            R"("full_attention","linear_attention","linear_attention","linear_attention",)"
            R"("full_attention"]})");
  EXPECT_THAT(summary(by_types),
              ElementsAre("2x decoder h16/2 d256/256", "6x linear_attention 1097728B"));
  EXPECT_THAT(indices(by_types, full), ElementsAre(3, 7));
  const ModelSpec by_interval =
      parse(R"({"model_type":"qwen3_next",)" + common + R"(,"full_attention_interval":4})");
  EXPECT_EQ(summary(by_interval), summary(by_types));
  EXPECT_THAT(indices(by_interval, full), ElementsAre(3, 7));
}

TEST(ModelInline, StateBytesFormulas) {
  model_detail::Mamba2Dims d{64, 64, 8, 128, 4};
  EXPECT_EQ(model_detail::mamba2_state_bytes(d, DType::kBFloat16, DType::kFloat32),
            3 * 6144 * 2 + 64 * 64 * 128 * 4);
  EXPECT_EQ(model_detail::mamba2_state_bytes(d, DType::kBFloat16, DType::kBFloat16),
            3 * 6144 * 2 + 64 * 64 * 128 * 2);
}

TEST(ModelInline, NemotronSsmDtypeDefaultsToFloat32) {
  const std::string body =
      R"("hidden_size":256,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,)"
      R"("num_hidden_layers":2,"hybrid_override_pattern":"M*","mamba_num_heads":8,)"
      R"("mamba_head_dim":16,"n_groups":1,"ssm_state_size":16,"conv_kernel":4)";
  // conv 3 * (8*16 + 2*1*16) * 2 = 960; ssm 8*16*16 = 2048 elements.
  const ModelSpec nemo = parse(R"({"model_type":"nemotron_h",)" + body + "}");
  ASSERT_EQ(nemo.state_layers.size(), 1u);
  EXPECT_EQ(nemo.state_layers[0].state_bytes_per_request, 960 + 2048 * 4);
  const ModelSpec other = parse(R"({"model_type":"hybrid_x",)" + body + "}");
  EXPECT_EQ(other.state_layers[0].state_bytes_per_request, 960 + 2048 * 2);
  const ModelSpec fp16 =
      parse(R"({"model_type":"nemotron_h","mamba_ssm_cache_dtype":"float16",)" + body + "}");
  EXPECT_EQ(fp16.state_layers[0].state_bytes_per_request, 960 + 2048 * 2);
}

// Jamba (vLLM jamba.py over transformers' JambaConfig.layers_block_type): attention where
// i % attn_layer_period == attn_layer_offset, Mamba-1 layers elsewhere, whose state per request
// is (d_conv - 1) x intermediate + intermediate x d_state with intermediate = mamba_expand *
// hidden_size. Jamba-v0.1's fields.
TEST(ModelInline, JambaAttentionEveryEighthLayerAndMamba1State) {
  const std::string body =
      R"("architectures":["JambaForCausalLM"],"model_type":"jamba","hidden_size":4096,)"
      R"("num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32,)"
      R"("attn_layer_period":8,"attn_layer_offset":4,"expert_layer_period":2,)"
      R"("expert_layer_offset":1,"mamba_d_conv":4,"mamba_d_state":16,"mamba_expand":2,)"
      R"("mamba_dt_rank":256,"max_position_embeddings":262144,"sliding_window":null,)"
      R"("torch_dtype":"bfloat16")";
  const ModelSpec m = parse("{" + body + "}");
  EXPECT_TRUE(m.notes.empty()) << m.notes.front();
  EXPECT_THAT(summary(m), ElementsAre("4x decoder h32/8 d128/128", "28x mamba 311296B"));
  std::vector<int> attn;
  for (const LayerSpec& l : m.attention_layers) attn.push_back(l.layer_index);
  EXPECT_THAT(attn, ElementsAre(4, 12, 20, 28));
  ASSERT_EQ(m.state_layers.size(), 28u);
  for (const StateLayerSpec& s : m.state_layers) {
    EXPECT_EQ(s.kind, StateKind::kMamba);
    EXPECT_NE(s.layer_index % 8, 4);
    EXPECT_EQ(s.state_bytes_per_request, 3 * 8192 * 2 + 8192 * 16 * 2);
  }
  const ModelSpec fp32_ssm = parse(R"({"mamba_ssm_cache_dtype":"float32",)" + body + "}");
  EXPECT_EQ(fp32_ssm.state_layers[0].state_bytes_per_request, 3 * 8192 * 2 + 8192 * 16 * 4);
  EXPECT_THROW(parse(R"({"model_type":"jamba","hidden_size":64,"num_attention_heads":2,)"
                     R"("num_hidden_layers":8,"attn_layer_period":4,"attn_layer_offset":4})"),
               InvalidArgument);
}

// Bamba (vLLM bamba.py over transformers' BambaConfig.layers_block_type): attention at
// attn_layer_indices, Mamba2 elsewhere, whose conv channels are mamba_expand * hidden_size and
// whose mamba_d_head "auto" is those channels per head. Bamba-9B's layer count, heads and
// attention indices.
TEST(ModelInline, BambaAttentionAtItsIndicesAndMamba2State) {
  const std::string body =
      R"("architectures":["BambaForCausalLM"],"model_type":"bamba","hidden_size":4096,)"
      R"("num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32,)"
      R"("attn_layer_indices":[9,18,27],"mamba_n_heads":128,"mamba_n_groups":1,)"
      R"("mamba_d_state":128,"mamba_d_conv":4,"mamba_expand":2,)"
      R"("max_position_embeddings":262144,"torch_dtype":"bfloat16")";
  const ModelSpec m = parse(R"({"mamba_d_head":64,)" + body + "}");
  EXPECT_TRUE(m.notes.empty()) << m.notes.front();
  // conv 3 x (8192 + 2 x 128) x 2 B; temporal 128 x 64 x 128 x 2 B.
  const int64_t state = 3 * (8192 + 256) * 2 + 128 * 64 * 128 * 2;
  EXPECT_THAT(summary(m),
              ElementsAre("3x decoder h32/8 d128/128", "29x mamba " + std::to_string(state) + "B"));
  std::vector<int> attn;
  for (const LayerSpec& l : m.attention_layers) attn.push_back(l.layer_index);
  EXPECT_THAT(attn, ElementsAre(9, 18, 27));
  const ModelSpec automatic = parse(R"({"mamba_d_head":"auto",)" + body + "}");
  EXPECT_EQ(automatic.state_layers[0].state_bytes_per_request, state);
  for (const char* bad : {"[9,9]", "[32]", "[-1]", "[\"9\"]", "9"})
    EXPECT_THROW(parse(R"({"mamba_d_head":64,)" + body + R"(,"attn_layer_indices":)" + bad + "}"),
                 InvalidArgument)
        << bad;
}

// Falcon-H1 (vLLM falcon_h1.py): every decoder layer runs attention and a Mamba2 mixer side by
// side; the mixer of layer i is state layer num_hidden_layers + i (vLLM's index for it), with
// mamba_d_ssm conv channels where set, else mamba_expand * hidden_size. A small Falcon-H1-shaped
// config (field names as transformers' FalconH1Config).
TEST(ModelInline, FalconH1AttentionAndMamba2InEveryLayer) {
  const std::string body =
      R"("architectures":["FalconH1ForCausalLM"],"model_type":"falcon_h1","hidden_size":1024,)"
      R"("num_attention_heads":8,"num_key_value_heads":2,"head_dim":64,"num_hidden_layers":4,)"
      R"("mamba_n_heads":24,"mamba_d_head":64,"mamba_n_groups":1,"mamba_d_state":128,)"
      R"("mamba_d_conv":4,"mamba_expand":2,"key_multiplier":0.5,)"
      R"("max_position_embeddings":16384,"torch_dtype":"bfloat16")";
  const ModelSpec m = parse(R"({"mamba_d_ssm":1536,)" + body + "}");
  EXPECT_TRUE(m.notes.empty()) << m.notes.front();
  EXPECT_EQ(m.num_layers, 4);
  // conv 3 x (1536 + 2 x 128) x 2 B; temporal 24 x 64 x 128 x 2 B.
  const int64_t state = 3 * (1536 + 256) * 2 + 24 * 64 * 128 * 2;
  EXPECT_THAT(summary(m),
              ElementsAre("4x decoder h8/2 d64/64", "4x mamba " + std::to_string(state) + "B"));
  std::vector<int> mixers;
  for (const StateLayerSpec& st : m.state_layers) mixers.push_back(st.layer_index);
  EXPECT_THAT(mixers, ElementsAre(4, 5, 6, 7));
  const ModelSpec by_expand = parse(R"({"mamba_d_ssm":null,)" + body + "}");
  EXPECT_EQ(by_expand.state_layers[0].state_bytes_per_request,
            3 * (2048 + 256) * 2 + 24 * 64 * 128 * 2);
}

// LFM2 (vLLM lfm2.py): attention at full_attn_idxs (or layer_types' full_attention), short
// convolutions elsewhere, whose state is (conv_L_cache - 1) x hidden_size in the model dtype
// (short_conv_state_shape). LFM2-1.2B-shaped fields.
TEST(ModelInline, Lfm2ShortConvolutionLayers) {
  const std::string body =
      R"("architectures":["Lfm2ForCausalLM"],"model_type":"lfm2","hidden_size":2048,)"
      R"("num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":16,)"
      R"("conv_L_cache":3,"max_position_embeddings":128000,"torch_dtype":"bfloat16")";
  const ModelSpec by_idxs = parse(R"({"full_attn_idxs":[2,5,8,10,12,14],)" + body + "}");
  EXPECT_TRUE(by_idxs.notes.empty()) << by_idxs.notes.front();
  EXPECT_THAT(summary(by_idxs), ElementsAre("6x decoder h32/8 d64/64", "10x short_conv 8192B"));
  std::vector<int> attn;
  for (const LayerSpec& l : by_idxs.attention_layers) attn.push_back(l.layer_index);
  EXPECT_THAT(attn, ElementsAre(2, 5, 8, 10, 12, 14));
  std::string types;
  for (int i = 0; i < 16; ++i)
    types += std::string(i ? "," : "") + (std::find(attn.begin(), attn.end(), i) != attn.end()
                                              ? R"("full_attention")"
                                              : R"("conv")");
  const ModelSpec by_types = parse(R"({"layer_types":[)" + types + "]," + body + "}");
  EXPECT_EQ(summary(by_types), summary(by_idxs));
  EXPECT_THROW(parse(R"({"full_attn_idxs":[2,16],)" + body + "}"), InvalidArgument);
}

// MiniMax-Text-01 / M1: attn_type_list marks softmax attention (1) and lightning linear
// attention (0), whose state is num_attention_heads x head_dim x head_dim in the model dtype
// (vLLM linear_attention_state_shape). MiniMax-Text-01-shaped: every eighth layer softmax.
TEST(ModelInline, MiniMaxLightningLinearAttentionLayers) {
  std::string types;
  for (int i = 0; i < 16; ++i) types += std::string(i ? "," : "") + ((i + 1) % 8 ? "0" : "1");
  const std::string body =
      R"("architectures":["MiniMaxText01ForCausalLM"],"model_type":"minimax_text_01",)"
      R"("hidden_size":6144,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":128,)"
      R"("num_hidden_layers":16,"max_position_embeddings":10240000,"torch_dtype":"bfloat16")";
  const ModelSpec m = parse(R"({"attn_type_list":[)" + types + "]," + body + "}");
  EXPECT_TRUE(m.notes.empty()) << m.notes.front();
  EXPECT_THAT(summary(m),
              ElementsAre("2x decoder h64/8 d128/128", "14x linear_attention 2097152B"));
  EXPECT_THAT(indices(m, full), ElementsAre(7, 15));
  EXPECT_THROW(parse(R"({"attn_type_list":[0,1],)" + body + "}"), InvalidArgument);
  EXPECT_THROW(
      parse(R"({"attn_type_list":[)" + types.substr(0, types.size() - 1) + "2]," + body + "}"),
      InvalidArgument);
}

// layers_block_type, where a config lists it: attention, mamba (Mamba2 fields), moe / mlp
// (feed-forward only: neither KV nor state); "hybrid" blocks belong to Zamba2 only.
TEST(ModelInline, LayersBlockTypeListsEachLayer) {
  const std::string body =
      R"("model_type":"nemotron_h","hidden_size":256,"num_attention_heads":4,)"
      R"("num_key_value_heads":2,"head_dim":64,"num_hidden_layers":4,"mamba_num_heads":8,)"
      R"("mamba_head_dim":16,"n_groups":1,"ssm_state_size":16,"conv_kernel":4,)"
      R"("mamba_ssm_cache_dtype":"bfloat16")";
  const ModelSpec m =
      parse(R"({"layers_block_type":["mamba","moe","attention","mlp"],)" + body + "}");
  // conv 3 x (8 x 16 + 2 x 16) x 2 B = 960; ssm 8 x 16 x 16 x 2 B = 4096.
  EXPECT_THAT(summary(m), ElementsAre("1x decoder h4/2 d64/64", "1x mamba 5056B"));
  EXPECT_EQ(m.attention_layers[0].layer_index, 2);
  EXPECT_EQ(m.state_layers[0].layer_index, 0);
  try {
    parse(R"({"layers_block_type":["mamba","hybrid","mamba","hybrid"],)" + body + "}");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'layers_block_type[1]' is \"hybrid\""));
    EXPECT_THAT(e.what(), HasSubstr("zamba2"));
  }
  EXPECT_THROW(parse(R"({"layers_block_type":["mamba"],)" + body + "}"), InvalidArgument);
}

// The runner, as vLLM's default runner is chosen: a Sentence Transformers folder pools; else the
// first architecture its registry or class-name suffixes place (in _SUFFIX_TO_DEFAULTS' order);
// else generate. Encoder-only models pool and refuse generate; an explicit runner wins otherwise.
// The dtype rule sees the result.
TEST(ModelInline, RunnerFollowsVllmDefaults) {
  auto runner = [](const std::string& arch, Runner requested = Runner::kAuto) {
    ModelLoadOptions o;
    o.runner = requested;
    const ModelSpec m = parse(
        R"({"model_type":"llama","hidden_size":256,"num_attention_heads":4,"num_hidden_layers":1,)"
        R"("max_position_embeddings":64)" +
            (arch.empty() ? std::string() : R"(,"architectures":)" + arch) + "}",
        o);
    return std::make_pair(m.pooling, m.runner_reason);
  };
  EXPECT_EQ(runner(R"(["LlamaForCausalLM"])"),
            std::make_pair(false, std::string("architecture LlamaForCausalLM, vLLM's default "
                                              "for *ForCausalLM")));
  EXPECT_EQ(
      runner(R"(["LlamaModel"])"),
      std::make_pair(true, std::string("architecture LlamaModel, vLLM's default for *Model")));
  EXPECT_TRUE(runner(R"(["Qwen2ForRewardModel"])").first);
  EXPECT_THAT(runner(R"(["Qwen2ForRewardModel"])").second, HasSubstr("*RewardModel"));
  EXPECT_TRUE(runner(R"(["MistralForSequenceClassification"])").first);
  EXPECT_TRUE(runner(R"(["GritLM"])").first);
  EXPECT_FALSE(runner(R"(["ChatGLMModel"])").first);  // registered generative despite *Model
  EXPECT_FALSE(runner(R"(["InternVLChatModel"])").first);
  EXPECT_FALSE(runner(R"(["Qwen2_5OmniModel"])").first);
  EXPECT_FALSE(runner(R"(["QWenLMHeadModel"])").first);
  EXPECT_TRUE(runner(R"(["SomethingNew","LlamaModel"])").first);  // the first one placed decides
  EXPECT_EQ(runner(""), std::make_pair(false, std::string("no architectures named")));
  EXPECT_EQ(runner(R"(["LlamaModel"])", Runner::kGenerate),
            std::make_pair(false, std::string("--runner generate")));
  EXPECT_EQ(runner(R"(["LlamaForCausalLM"])", Runner::kPooling),
            std::make_pair(true, std::string("--runner pooling")));
  EXPECT_THROW(runner(R"("LlamaModel")"), InvalidArgument);
  EXPECT_THROW(runner(R"([7])"), InvalidArgument);

  const std::string bert =
      R"({"model_type":"bert","hidden_size":768,"num_attention_heads":12,)"
      R"("num_hidden_layers":2,"max_position_embeddings":512,"architectures":["BertForMaskedLM"]})";
  EXPECT_TRUE(parse(bert).pooling);
  ModelLoadOptions generate;
  generate.runner = Runner::kGenerate;
  EXPECT_THROW(parse(bert, generate), Unsupported);
  // A decoder config made bidirectional (gte-Qwen2's is_causal false: vLLM's Qwen2 layers run
  // encoder-only attention) is an encoder-only model: it pools, and its layers take no cache.
  const std::string gte =
      R"({"architectures":["Qwen2ForCausalLM"],"model_type":"qwen2","hidden_size":3584,)"
      R"("num_attention_heads":28,"num_key_value_heads":4,"num_hidden_layers":2,)"
      R"("max_position_embeddings":32768,"is_causal":false})";
  const ModelSpec bidirectional = parse(gte);
  EXPECT_TRUE(bidirectional.pooling);
  EXPECT_THAT(bidirectional.runner_reason, HasSubstr("encoder-only: a decoder made bidirectional"));
  EXPECT_EQ(bidirectional.attention_layers[0].attn_type, AttentionType::kEncoderOnly);
  EXPECT_THROW(parse(gte, generate), Unsupported);

  // A Sentence Transformers folder (Qwen3-Embedding's: a *ForCausalLM class) pools, and the dtype
  // rule is told so.
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("attnkit_st_folder_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "config.json")
      << R"({"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","hidden_size":1024,)"
         R"("num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,)"
         R"("num_hidden_layers":2,"max_position_embeddings":32768,"torch_dtype":"float32"})";
  std::vector<ModelDtypeQuery> seen;
  ModelLoadOptions o;
  o.dtype_rule = [&](const ModelDtypeQuery& q) {
    seen.push_back(q);
    return ModelDtype{DType::kFloat16, ""};
  };
  EXPECT_FALSE(load_model((dir / "config.json").string(), o).pooling);
  std::ofstream(dir / "modules.json") << "[]";
  const ModelSpec st = load_model((dir / "config.json").string(), o);
  fs::remove_all(dir);
  EXPECT_TRUE(st.pooling);
  EXPECT_EQ(st.runner_reason, "a Sentence Transformers folder: modules.json beside the config");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_FALSE(seen[0].pooling);
  EXPECT_TRUE(seen[1].pooling);
}

// Zamba2 (vLLM zamba2.py over transformers' Zamba2Config): every layer has a Mamba2 mixer
// (mamba_expand x hidden_size channels over n_mamba_heads heads), numbered hybrid count + i; each
// "hybrid" layer also runs a shared attention block over 2 x hidden_size (heads of 2 x hidden /
// heads, as many KV heads, scale (head / 2)^-0.5) with a KV cache of its own, vLLM's attn.0 ..
// attn.(hybrids - 1). Zamba2-2.7B's fields; its layers_block_type is Zamba2Config's default.
TEST(ModelInline, Zamba2SharedAttentionBlocksAndMamba2Mixers) {
  auto config = [](int heads, int mamba_heads, int mem_blocks) {
    return parse(fmt::format(
        R"({{"architectures":["Zamba2ForCausalLM"],"model_type":"zamba2","hidden_size":2560,)"
        R"("num_attention_heads":{},"num_hidden_layers":54,"n_mamba_heads":{},)"
        R"("mamba_headdim":64,"mamba_d_state":64,"mamba_d_conv":4,"mamba_expand":2,)"
        R"("mamba_ngroups":1,"num_mem_blocks":{},"use_mem_rope":true,)"
        R"("max_position_embeddings":4096,"torch_dtype":"bfloat16"}})",
        heads, mamba_heads, mem_blocks));
  };
  const ModelSpec m = config(32, 80, 2);
  EXPECT_TRUE(m.notes.empty()) << m.notes.front();
  // conv 3 x (5120 + 2 x 64) x 2 B; temporal 80 x 64 x 64 x 2 B.
  const int64_t state = 3 * (5120 + 128) * 2 + 80 * 64 * 64 * 2;
  EXPECT_THAT(summary(m), ElementsAre("9x decoder h32/32 d160/160",
                                      "54x mamba " + std::to_string(state) + "B"));
  EXPECT_EQ(m.num_layers, 54);
  EXPECT_EQ(m.max_position_embeddings, 4096);
  std::vector<int> attn, mixers;
  for (const LayerSpec& l : m.attention_layers) {
    attn.push_back(l.layer_index);
    EXPECT_DOUBLE_EQ(l.scale(), 1.0 / std::sqrt(80.0));
  }
  for (const StateLayerSpec& st : m.state_layers) mixers.push_back(st.layer_index);
  EXPECT_THAT(attn, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8));
  ASSERT_EQ(mixers.size(), 54u);
  EXPECT_EQ(mixers.front(), 9);
  EXPECT_EQ(mixers.back(), 62);

  // Zamba2-1.2B's shape: one shared block (the default), heads of 2 x 2048 / 32 = 128.
  const ModelSpec small =
      parse(R"({"model_type":"zamba2","hidden_size":2048,"num_attention_heads":32,)"
            R"("num_hidden_layers":6,"n_mamba_heads":64,"layers_block_type":["mamba","hybrid",)"
            R"("mamba","mamba","hybrid","mamba"],"use_long_context":true})");
  EXPECT_THAT(
      summary(small),
      ElementsAre("2x decoder h32/32 d128/128",
                  "6x mamba " + std::to_string(3 * (4096 + 128) * 2 + 64 * 64 * 64 * 2) + "B"));
  EXPECT_EQ(small.max_position_embeddings, 16384);  // use_long_context

  EXPECT_THROW(config(48, 80, 2), InvalidArgument);  // 5120 is not split over 48 heads
  EXPECT_THROW(config(32, 96, 2), InvalidArgument);  // nor 5120 channels over 96 mamba heads
  EXPECT_THROW(config(32, 80, 3), InvalidArgument);  // vLLM would number an attention layer 9
  try {
    // vLLM's Zamba2 reads every type but "hybrid" as mamba; an "attention" entry is refused.
    parse(R"({"model_type":"zamba2","hidden_size":2048,"num_attention_heads":32,)"
          R"("num_hidden_layers":2,"layers_block_type":["mamba","attention"]})");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected mamba or hybrid"));
  }
}

// MiniCPM3 states MLA's latent fields, but vLLM's MiniCPM3Attention expands the latent into
// per-head K (nope + rope) and V (padded to that width) and runs plain attention with one KV head
// per query head: a 96-wide MHA cache for MiniCPM3-4B, not a 288-wide latent one.
TEST(ModelInline, MiniCpm3ExpandsItsLatentIntoHeads) {
  const ModelSpec m = parse(
      R"({"architectures":["MiniCPM3ForCausalLM"],"model_type":"minicpm3","hidden_size":2560,)"
      R"("num_attention_heads":40,"num_key_value_heads":40,"num_hidden_layers":62,)"
      R"("qk_nope_head_dim":64,"qk_rope_head_dim":32,"v_head_dim":64,"kv_lora_rank":256,)"
      R"("q_lora_rank":768,"max_position_embeddings":32768,"torch_dtype":"bfloat16"})");
  EXPECT_TRUE(m.notes.empty()) << m.notes.front();
  EXPECT_THAT(summary(m), ElementsAre("62x decoder h40/40 d96/96"));
  EXPECT_FALSE(m.attention_layers[0].is_mla());
  EXPECT_DOUBLE_EQ(m.attention_layers[0].scale(), 1.0 / std::sqrt(96.0));
}

// Kimi-Linear (vLLM kimi_linear.py): linear_attn_config.kda_layers (1-based) run Kimi Delta
// Attention, whose state is q, k, v short-convolution windows of (kernel - 1) x heads x head_dim
// in the model dtype plus a heads x head_dim x head_dim float32 recurrent state; the other layers
// are MLA (kimi_linear is one of vLLM's MLA model types). Kimi-Linear-48B-A3B's fields.
TEST(ModelInline, KimiLinearKdaAndMlaLayers) {
  auto config = [](const std::string& kda) {
    return parse(
        R"({"architectures":["KimiLinearForCausalLM"],"model_type":"kimi_linear",)"
        R"("hidden_size":2304,"num_attention_heads":32,"num_key_value_heads":32,)"
        R"("num_hidden_layers":27,"kv_lora_rank":512,"q_lora_rank":null,"qk_nope_head_dim":128,)"
        R"("qk_rope_head_dim":64,"v_head_dim":128,"mla_use_nope":true,"linear_attn_config":{)"
        R"("full_attn_layers":[4,8,12,16,20,24,27],"kda_layers":)" +
        kda +
        R"(,"num_heads":32,"head_dim":128,"short_conv_kernel_size":4},)"
        R"("max_position_embeddings":1048576,"torch_dtype":"bfloat16"})");
  };
  std::string kda;
  for (int n = 1; n <= 27; ++n)
    if (n % 4 != 0 && n != 27) kda += (kda.empty() ? "" : ",") + std::to_string(n);
  const ModelSpec m = config("[" + kda + "]");
  EXPECT_TRUE(m.notes.empty()) << m.notes.front();
  // conv 3 x 3 x 32 x 128 x 2 B; recurrent 32 x 128 x 128 x 4 B.
  const int64_t state = 3 * 3 * 32 * 128 * 2 + 32 * 128 * 128 * 4;
  EXPECT_THAT(summary(m), ElementsAre("7x decoder h32/1 d576/512 mla512/128/64/128/0",
                                      "20x linear_attention " + std::to_string(state) + "B"));
  std::vector<int> attn;
  for (const LayerSpec& l : m.attention_layers) {
    attn.push_back(l.layer_index);
    EXPECT_TRUE(l.is_mla());
  }
  EXPECT_THAT(attn, ElementsAre(3, 7, 11, 15, 19, 23, 26));
  for (const char* bad : {"[0]", "[28]", "[1,1]", "[\"1\"]"})
    EXPECT_THROW(config(bad), InvalidArgument) << bad;
}

TEST(ModelInline, DeepSeekSparseAndNullQLora) {
  const ModelSpec m =
      parse(R"({"model_type":"deepseek_v32","hidden_size":7168,"num_attention_heads":128,)"
            R"("num_key_value_heads":128,"num_hidden_layers":3,"kv_lora_rank":512,)"
            R"("q_lora_rank":null,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,)"
            R"("index_topk":2048})");
  EXPECT_THAT(summary(m), ElementsAre("3x decoder h128/1 d576/512 mla512/128/64/128/0 sparse"));
}

// DeepseekV2Config / DeepseekV3Config / Glm4MoeLiteConfig default the MLA dims: a config that
// leaves them out is still MLA (before, DeepSeek-V3 without kv_lora_rank read as 128-head MHA of
// head size 7168 / 128 = 56). An explicit null keeps its meaning.
TEST(ModelInline, MlaDimsDefaultAsTransformersDoes) {
  const std::string path = ATTNKIT_SOURCE_DIR "/models/deepseek-v3.json";
  std::ifstream in(path);
  nlohmann::json cfg = nlohmann::json::parse(in);
  const std::vector<std::string> full = summary(parse_model_config(cfg.dump(), path));
  ASSERT_THAT(full, ElementsAre("61x decoder h128/1 d576/512 mla512/128/64/128/1536"));
  for (const char* k :
       {"kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
    cfg.erase(k);
  EXPECT_EQ(summary(parse_model_config(cfg.dump(), path)), full);

  // The same through a text_config keyed by its own model_type, and for Kimi-K2 / V3.2 / V2.
  const std::string dims = R"("hidden_size":7168,"num_attention_heads":128,"num_hidden_layers":2)";
  EXPECT_THAT(
      summary(parse(R"({"model_type":"kimi_vl","text_config":{"model_type":"deepseek_v3",)" + dims +
                    "}}")),
      ElementsAre("2x decoder h128/1 d576/512 mla512/128/64/128/1536"));
  for (const char* type : {"kimi_k2", "deepseek_v32", "deepseek_v2"})
    EXPECT_THAT(summary(parse(fmt::format(R"({{"model_type":"{}",{}}})", type, dims))),
                ElementsAre("2x decoder h128/1 d576/512 mla512/128/64/128/1536"))
        << type;
  EXPECT_EQ(parse(R"({"model_type":"deepseek_v2",)" + dims + "}").max_position_embeddings, 2048);
  EXPECT_EQ(parse(R"({"model_type":"deepseek_v3",)" + dims + "}").max_position_embeddings, 4096);
  const ModelSpec glm = parse(R"({"model_type":"glm4_moe_lite",)" + dims + "}");
  EXPECT_THAT(summary(glm), ElementsAre("2x decoder h128/1 d576/512 mla512/192/64/256/768"));
  EXPECT_EQ(glm.max_position_embeddings, 202752);

  // "q_lora_rank": null is full-rank queries (DeepSeek-V2-Lite); "kv_lora_rank": null is no MLA.
  EXPECT_THAT(summary(parse(R"({"model_type":"deepseek_v2","q_lora_rank":null,)" + dims + "}")),
              ElementsAre("2x decoder h128/1 d576/512 mla512/128/64/128/0"));
  EXPECT_THAT(summary(parse(R"({"model_type":"deepseek_v3","kv_lora_rank":null,)" + dims + "}")),
              ElementsAre("2x decoder h128/128 d56/56"));
}

// Llama 4's chunked layers from layer_types, from no_rope_layers (1 = RoPE = chunked), or
// from no_rope_layer_interval; a null attention_chunk_size makes them full, as in transformers.
TEST(ModelInline, Llama4ChunkedLayers) {
  const std::string base =
      R"({"model_type":"llama4","text_config":{"model_type":"llama4_text","hidden_size":512,)"
      R"("num_attention_heads":8,"num_key_value_heads":2,"head_dim":64,"num_hidden_layers":4,)";
  auto chunks = [](const ModelSpec& m) {
    std::vector<int> c;
    for (const auto& l : m.attention_layers) c.push_back(l.attention_chunk_size.value_or(0));
    return c;
  };
  EXPECT_THAT(
      chunks(parse(base + R"("attention_chunk_size":64,"layer_types":["full_attention",)"
                          R"("chunked_attention","chunked_attention","full_attention"]}})")),
      ElementsAre(0, 64, 64, 0));
  EXPECT_THAT(chunks(parse(base + R"("attention_chunk_size":32,"no_rope_layers":[0,1,0,1]}})")),
              ElementsAre(0, 32, 0, 32));
  EXPECT_THAT(chunks(parse(base + R"("no_rope_layer_interval":2,"no_rope_layers":[]}})")),
              ElementsAre(8192, 0, 8192, 0));
  EXPECT_THAT(chunks(parse(base + R"("attention_chunk_size":null}})")), ElementsAre(0, 0, 0, 0));
  // A chunk size with no chunked layer named: every layer full, and a note says so.
  const ModelSpec plain = parse(
      R"({"model_type":"llama","hidden_size":512,"num_attention_heads":8,"num_hidden_layers":2,)"
      R"("attention_chunk_size":128})");
  EXPECT_THAT(chunks(plain), ElementsAre(0, 0));
  ASSERT_FALSE(plain.notes.empty());
  EXPECT_THAT(plain.notes.back(), HasSubstr("no layer is chunked"));
  try {
    parse(base + R"("no_rope_layers":[1,1,2,0]}})");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("no_rope_layers[2]"));
  }
  try {
    parse(base + R"("no_rope_layers":[1,1,0]}})");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected one per layer (4)"));
  }
}

TEST(ModelInline, SoftmaxScaleFields) {
  auto scale = [](const std::string& text) {
    const ModelSpec m = parse(text);
    EXPECT_FALSE(m.attention_layers.empty());
    return m.attention_layers.at(0).softmax_scale;
  };
  // Gemma 2 27B: query_pre_attn_scalar 144 over heads of 128.
  EXPECT_EQ(scale(R"({"model_type":"gemma2","hidden_size":4608,"num_attention_heads":32,)"
                  R"("num_key_value_heads":16,"head_dim":128,"num_hidden_layers":2,)"
                  R"("query_pre_attn_scalar":144})"),
            1.0 / 12);
  // Gemma 3 without the key: Gemma3TextConfig's 256, over heads of 128.
  EXPECT_EQ(scale(R"({"model_type":"gemma3_text","hidden_size":1024,"num_attention_heads":8,)"
                  R"("num_key_value_heads":4,"head_dim":128,"num_hidden_layers":6})"),
            1.0 / 16);
  EXPECT_EQ(scale(R"({"model_type":"gemma3n_text","hidden_size":2048,"num_attention_heads":8,)"
                  R"("num_key_value_heads":2,"head_dim":256,"num_hidden_layers":2})"),
            1.0);
  // Granite's attention_multiplier; Granite 4's hybrid reads its mamba layers from layer_types.
  EXPECT_EQ(
      scale(R"({"model_type":"granite","hidden_size":4096,"num_attention_heads":32,)"
            R"("num_key_value_heads":8,"num_hidden_layers":2,"attention_multiplier":0.0078125})"),
      0.0078125);
  const ModelSpec granite4 =
      parse(R"({"model_type":"granitemoehybrid","hidden_size":1536,"num_attention_heads":12,)"
            R"("num_key_value_heads":4,"num_hidden_layers":4,"layer_types":["mamba","mamba",)"
            R"("attention","mamba"],"attention_multiplier":0.0078125,"mamba_n_heads":48,)"
            R"("mamba_d_head":64,"mamba_n_groups":1,"mamba_d_state":128,"mamba_d_conv":4})");
  EXPECT_TRUE(granite4.notes.empty());  // a known type: no "read the llama way" note
  ASSERT_EQ(granite4.attention_layers.size(), 1u);
  EXPECT_EQ(granite4.attention_layers[0].layer_index, 2);
  EXPECT_EQ(granite4.attention_layers[0].softmax_scale, 0.0078125);
  EXPECT_EQ(granite4.state_layers.size(), 3u);
  EXPECT_EQ(scale(R"({"model_type":"mpt","d_model":1024,"n_heads":16,"n_layers":2,)"
                  R"("attn_config":{"alibi":true,"softmax_scale":0.1}})"),
            0.1);
  EXPECT_EQ(scale(R"({"model_type":"mpt","d_model":1024,"n_heads":16,"n_layers":2,)"
                  R"("attn_config":{"alibi":true,"softmax_scale":null}})"),
            std::nullopt);
  // MLA with YaRN: transformers v5's rope_parameters as well; no mscale_all_dim (or a factor of
  // at most 1) leaves the default.
  const std::string mla = R"({"model_type":"deepseek_v3","hidden_size":7168,)"
                          R"("num_attention_heads":128,"num_hidden_layers":2,)";
  const double m = 0.1 * 0.707 * std::log(4.0) + 1.0;
  EXPECT_NEAR(scale(mla + R"("rope_parameters":{"rope_type":"yarn","factor":4,)"
                          R"("mscale_all_dim":0.707}})")
                  .value_or(0),
              m * m / std::sqrt(192.0), 1e-15);
  EXPECT_EQ(scale(mla + R"("rope_scaling":{"type":"yarn","factor":40}})"), std::nullopt);
  EXPECT_EQ(scale(mla + R"("rope_scaling":{"type":"yarn","factor":1,"mscale_all_dim":1}})"),
            std::nullopt);
  // A non-MLA model's YaRN leaves the logits' scale alone (its mscale scales cos/sin).
  EXPECT_EQ(scale(R"({"model_type":"qwen3","hidden_size":1024,"num_attention_heads":16,)"
                  R"("num_hidden_layers":2,"rope_scaling":{"type":"yarn","factor":4,)"
                  R"("mscale_all_dim":1}})"),
            std::nullopt);
  // Layers of different scales never share a group's signature.
  LayerSpec a = parse(R"({"model_type":"llama","hidden_size":1024,"num_attention_heads":8,)"
                      R"("num_hidden_layers":1})")
                    .attention_layers.at(0);
  LayerSpec b = a;
  b.softmax_scale = 0.1;
  EXPECT_NE(a.signature(), b.signature());
}

// vLLM's kv_cache_dtype_skip_layers: named layers (and every sliding one) keep the model dtype's
// cache; a layer reading another's cache follows its target.
TEST(ModelInline, KvCacheDtypeSkipLayers) {
  const KvSkipLayers s = parse_kv_skip_layers(" 0, 5,sliding_window,, 12 ");
  EXPECT_THAT(s.layers, ElementsAre(0, 5, 12));
  EXPECT_TRUE(s.sliding_window);
  EXPECT_TRUE(parse_kv_skip_layers("").empty());
  for (const char* bad : {"x", "-1", "3.5", "sliding", "1e3"})
    EXPECT_THROW(parse_kv_skip_layers(bad), InvalidArgument) << bad;

  ModelLoadOptions o;
  o.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  o.kv_cache_dtype_skip_layers = parse_kv_skip_layers("sliding_window,3");
  const ModelSpec g = load_model("gemma-2-9b", o);
  for (const auto& l : g.attention_layers) {
    const bool kept = l.sliding_window || l.layer_index == 3;
    EXPECT_EQ(l.kv_cache_dtype, kept ? KvCacheDType::kAuto : KvCacheDType::kFp8E4M3)
        << l.layer_index;
    EXPECT_EQ(l.kv_scale_granularity,
              kept ? ScaleGranularity::kNone : ScaleGranularity::kPerTensor);
  }
  // Gemma 3n style sharing: layers 2-3 read layers 0-1's caches; skipping layer 0 keeps its
  // sharer (layer 2, a sliding layer like it) at auto too.
  o.kv_cache_dtype_skip_layers = parse_kv_skip_layers("0");
  const ModelSpec n = parse(
      R"({"model_type":"gemma3n_text","hidden_size":512,"num_attention_heads":4,"head_dim":128,)"
      R"("num_hidden_layers":4,"num_kv_shared_layers":2,"sliding_window":64,)"
      R"("layer_types":["sliding_attention","full_attention","sliding_attention",)"
      R"("full_attention"],"max_position_embeddings":4096})",
      o);
  std::vector<KvCacheDType> dt;
  for (const auto& l : n.attention_layers) dt.push_back(l.kv_cache_dtype);
  EXPECT_THAT(dt, ElementsAre(KvCacheDType::kAuto, KvCacheDType::kFp8E4M3, KvCacheDType::kAuto,
                              KvCacheDType::kFp8E4M3));
  // A layer that is not an attention layer, a model without sliding layers, no quantized dtype.
  o.kv_cache_dtype_skip_layers = parse_kv_skip_layers("32");
  try {
    load_model("qwen3-0.6b", o);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("layer 32 is not an attention layer of qwen3-0.6b"));
  }
  o.kv_cache_dtype_skip_layers = parse_kv_skip_layers("sliding_window");
  const ModelSpec q = load_model("qwen3-0.6b", o);
  ASSERT_EQ(q.notes.size(), 1u);
  EXPECT_THAT(q.notes[0], HasSubstr("no sliding-window layer"));
  o.kv_cache_dtype.reset();
  EXPECT_THROW(load_model("qwen3-0.6b", o), InvalidArgument);
}

// A checkpoint calibrated for a quantized KV cache turns `auto` into its format, as vLLM reads
// quantization_config; the user's --kv-cache-dtype wins, keeping a per-head calibration's scales.
TEST(ModelInline, CheckpointKvCacheScheme) {
  const std::string body = R"("model_type":"llama","hidden_size":1024,"num_attention_heads":8,)"
                           R"("num_key_value_heads":2,"num_hidden_layers":2,)";
  auto kv = [&](const std::string& quant, std::optional<KvCacheDType> user = std::nullopt) {
    ModelLoadOptions o;
    o.kv_cache_dtype = user;
    const LayerSpec l =
        parse("{" + body + R"("quantization_config":)" + quant + "}", o).attention_layers.at(1);
    return std::pair{l.kv_cache_dtype, l.kv_scale_granularity};
  };
  using P = std::pair<KvCacheDType, ScaleGranularity>;
  const std::string tensor =
      R"({"quant_method":"compressed-tensors","kv_cache_scheme":{"dynamic":false,"num_bits":8,)"
      R"("strategy":"tensor","symmetric":true,"type":"float"}})";
  const std::string head =
      R"({"quant_method":"compressed-tensors","kv_cache_scheme":{"num_bits":8,"type":"float",)"
      R"("strategy":"attn_head"}})";
  EXPECT_EQ(kv(tensor), P(KvCacheDType::kFp8E4M3, ScaleGranularity::kPerTensor));
  EXPECT_EQ(kv(head), P(KvCacheDType::kFp8E4M3, ScaleGranularity::kPerHead));
  EXPECT_EQ(kv(head, KvCacheDType::kFp8E5M2),
            P(KvCacheDType::kFp8E5M2, ScaleGranularity::kPerHead));
  EXPECT_EQ(kv(head, KvCacheDType::kAuto), P(KvCacheDType::kAuto, ScaleGranularity::kNone));
  EXPECT_EQ(kv(tensor, KvCacheDType::kNvfp4),
            P(KvCacheDType::kNvfp4, ScaleGranularity::kPerBlock16));
  EXPECT_EQ(kv(R"({"quant_method":"modelopt","quant_algo":"FP8","kv_cache_quant_algo":"FP8"})"),
            P(KvCacheDType::kFp8E4M3, ScaleGranularity::kPerTensor));
  EXPECT_EQ(kv(R"({"quantization":{"quant_algo":"NVFP4","kv_cache_quant_algo":"NVFP4"}})"),
            P(KvCacheDType::kNvfp4, ScaleGranularity::kPerBlock16));
  // Weight-only quantization, or a null scheme, leaves the cache alone.
  EXPECT_EQ(kv(R"({"quant_method":"fp8","weight_block_size":[128,128]})"),
            P(KvCacheDType::kAuto, ScaleGranularity::kNone));
  EXPECT_EQ(kv(R"({"quant_method":"compressed-tensors","kv_cache_scheme":null})"),
            P(KvCacheDType::kAuto, ScaleGranularity::kNone));
  EXPECT_EQ(kv(R"({"quantization":{"kv_cache_quant_algo":null}})"),
            P(KvCacheDType::kAuto, ScaleGranularity::kNone));
  // Schemes that are no KV cache format: refused by name.
  for (const auto& [quant, msg] : std::vector<std::pair<std::string, std::string>>{
           {R"({"kv_cache_scheme":{"num_bits":8,"type":"int","strategy":"tensor"}})",
            "quantization_config.kv_cache_scheme is 8-bit int"},
           {R"({"kv_cache_scheme":{"num_bits":8,"type":"float","strategy":"channel"}})",
            "field 'quantization_config.kv_cache_scheme.strategy' is 'channel'"},
           {R"({"kv_cache_quant_algo":"INT8"})",
            "field 'quantization_config.kv_cache_quant_algo' is 'INT8'; expected FP8 or NVFP4"}}) {
    try {
      kv(quant);
      ADD_FAILURE() << "expected InvalidArgument for " << quant;
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr(msg));
    }
  }
  // The skip list works over the checkpoint's format too.
  ModelLoadOptions o;
  o.kv_cache_dtype_skip_layers = parse_kv_skip_layers("0");
  const ModelSpec m = parse("{" + body + R"("quantization_config":)" + tensor + "}", o);
  EXPECT_EQ(m.attention_layers[0].kv_cache_dtype, KvCacheDType::kAuto);
  EXPECT_EQ(m.attention_layers[1].kv_cache_dtype, KvCacheDType::kFp8E4M3);
  // The format taken from the checkpoint is said (a user's --kv-cache-dtype needs no note).
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_THAT(m.notes[0], HasSubstr("quantization_config calibrates the KV cache for fp8_e4m3"));
  o.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_TRUE(parse("{" + body + R"("quantization_config":)" + head + "}", o).notes.empty());
  // A multimodal checkpoint's text config may state it (vLLM looks there when the top level has
  // none; llm_config after vLLM's remap); errors name the nesting.
  auto mm = [&](const std::string& key, const std::string& quant) {
    return parse(R"({"model_type":"llava",")" + key + R"(":{)" + body +
                 R"("quantization_config":)" + quant + "}}")
        .attention_layers.at(1);
  };
  for (const char* key : {"text_config", "llm_config"}) {
    const LayerSpec l = mm(key, head);
    EXPECT_EQ(P(l.kv_cache_dtype, l.kv_scale_granularity),
              P(KvCacheDType::kFp8E4M3, ScaleGranularity::kPerHead))
        << key;
  }
  try {
    mm("text_config", R"({"kv_cache_scheme":{"num_bits":8,"type":"float","strategy":"x"}})");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("field 'text_config.quantization_config.kv_cache_scheme.strategy'"));
  }
}

// EXAONE 4 states its pattern as a string ("LLLG": three sliding layers, then a full one);
// layer_types, where given, wins.
TEST(ModelInline, Exaone4StringSlidingPattern) {
  const std::string body =
      R"("model_type":"exaone4","hidden_size":5120,"num_attention_heads":40,)"
      R"("num_key_value_heads":8,"head_dim":128,"num_hidden_layers":8,"sliding_window":4096,)"
      R"("max_position_embeddings":131072,)";
  const ModelSpec m = parse("{" + body + R"("sliding_window_pattern":"LLLG"})");
  EXPECT_TRUE(m.notes.empty());
  EXPECT_THAT(indices(m, full), ElementsAre(3, 7));
  const ModelSpec t = parse("{" + body +
                            R"("sliding_window_pattern":"LLLG","layer_types":["full_attention",)"
                            R"("sliding_attention","sliding_attention","sliding_attention",)"
                            R"("full_attention","sliding_attention","sliding_attention",)"
                            R"("sliding_attention"]})");
  EXPECT_THAT(indices(t, full), ElementsAre(0, 4));
  try {
    parse("{" + body + R"("sliding_window_pattern":"LLX"})");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("field 'sliding_window_pattern' is \"LLX\""));
  }
}

TEST(ModelInline, KvSharingTargetsLastLayerOfSameKind) {
  const ModelSpec m =
      parse(R"({"model_type":"gemma3n_text","hidden_size":512,"num_attention_heads":4,)"
            R"("num_key_value_heads":1,"head_dim":128,"num_hidden_layers":6,"sliding_window":64,)"
            R"("max_position_embeddings":4096,"num_kv_shared_layers":2,"layer_types":)"
            R"(["sliding_attention","full_attention","sliding_attention","full_attention",)"
            R"("sliding_attention","full_attention"]})");
  ASSERT_EQ(m.attention_layers.size(), 6u);
  EXPECT_FALSE(m.attention_layers[3].kv_sharing_target_layer);
  EXPECT_EQ(m.attention_layers[4].kv_sharing_target_layer, 2);
  EXPECT_EQ(m.attention_layers[5].kv_sharing_target_layer, 3);
}

TEST(ModelInline, LoadOptionsApplyToEveryLayer) {
  ModelLoadOptions o;
  o.dtype = DType::kFloat16;
  o.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  o.block_size = 32;
  const ModelSpec m = load_model("gemma-2-9b", o);
  EXPECT_EQ(m.dtype, DType::kFloat16);
  for (const auto& l : m.attention_layers) {
    EXPECT_EQ(l.dtype, DType::kFloat16);
    EXPECT_EQ(l.kv_cache_dtype, KvCacheDType::kFp8E4M3);
    EXPECT_EQ(l.kv_scale_granularity, ScaleGranularity::kPerTensor);
    EXPECT_EQ(l.block_size, 32);
  }
}

TEST(ModelInline, BartStyleEncoderDecoder) {
  const ModelSpec m =
      parse(R"({"model_type":"bart","d_model":768,"encoder_layers":2,"decoder_layers":3,)"
            R"("encoder_attention_heads":12,"decoder_attention_heads":12,)"
            R"("max_position_embeddings":1024,"is_encoder_decoder":true})");
  EXPECT_THAT(summary(m), ElementsAre("2x encoder h12/12 d64/64", "3x decoder h12/12 d64/64",
                                      "3x encoder_decoder h12/12 d64/64"));
  EXPECT_EQ(m.num_layers, 5);
  EXPECT_EQ(m.max_position_embeddings, 1024);
  EXPECT_EQ(m.max_encoder_positions, 0);
  // Whisper states its decoder's and its encoder's lengths apart.
  const ModelSpec w = parse(
      R"({"model_type":"whisper","d_model":384,"encoder_layers":4,"decoder_layers":4,)"
      R"("encoder_attention_heads":6,"decoder_attention_heads":6,"max_source_positions":1500,)"
      R"("max_target_positions":448,"is_encoder_decoder":true})");
  EXPECT_EQ(w.max_position_embeddings, 448);
  EXPECT_EQ(w.max_encoder_positions, 1500);
}

// A new llama-like architecture is read (vLLM-like engines accept them), with a warning and a
// note that name the type and the assumption; known types (and a known text_config type inside
// an unknown wrapper) read silently.
TEST(ModelInline, UnknownModelTypeIsReadTheLlamaWayWithANote) {
  const std::string body = R"("hidden_size":2048,"num_attention_heads":16,"num_key_value_heads":4,)"
                           R"("num_hidden_layers":3)";
  {
    ScopedLogCapture log;
    const ModelSpec m = parse(R"({"model_type":"brand_new_lm",)" + body + "}");
    EXPECT_THAT(summary(m), ElementsAre("3x decoder h16/4 d128/128"));
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_THAT(m.notes[0], HasSubstr("inline.json: model_type 'brand_new_lm' is not a model type "
                                      "attnkit knows; its attention was read the llama way"));
    EXPECT_THAT(log.text(), HasSubstr("model_type 'brand_new_lm' is not a model type"));
  }
  {
    const ModelSpec m =
        parse(R"({"model_type":"new_vlm","text_config":{"model_type":"odd_lm",)" + body + "}}");
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_THAT(m.notes[0], HasSubstr("text_config.model_type 'odd_lm'"));
  }
  for (const std::string known :
       {R"({"model_type":"llama",)" + body + "}",
        R"({"model_type":"new_vlm","text_config":{"model_type":"qwen3",)" + body + "}}",
        R"({"model_type":"bert",)" + body + "}"}) {
    ScopedLogCapture log;
    EXPECT_TRUE(parse(known).notes.empty()) << known;
    EXPECT_EQ(log.text(), "") << known;
  }
  for (const std::string& name : bundled_model_names())
    EXPECT_TRUE(load_model(name).notes.empty()) << name;
}

// ---- malformed configs -------------------------------------------------------------------------

std::string error_of(const std::string& text) {
  try {
    parse_model_config(text, "/tmp/bad/config.json");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

TEST(ModelErrors, NameTheFieldAndTheFile) {
  struct Case {
    std::string json;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      // phi3: a type without transformers defaults in the reader's table (llama's fill these).
      {R"({"model_type":"phi3","hidden_size":4096,"num_hidden_layers":2})",
       {"/tmp/bad/config.json: field 'num_attention_heads' is missing (needed for the number of "
        "query heads"}},
      {R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":"32","num_hidden_layers":2})",
       {"/tmp/bad/config.json", "'num_attention_heads' must be a positive integer", "string"}},
      {R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":0,"num_hidden_layers":2})",
       {"/tmp/bad/config.json", "'num_attention_heads' must be a positive integer, got 0"}},
      // Checked before narrowing to int (4294967297 was read as 1 shared layer).
      {R"({"model_type":"gemma3n_text","hidden_size":512,"num_attention_heads":4,"head_dim":128,)"
       R"("num_hidden_layers":4,"num_kv_shared_layers":4294967297})",
       {"field 'num_kv_shared_layers' is 4294967297; expected 0 .. 3"}},
      // Past INT_MAX the message names the limit (before: "must be a positive integer, got
      // 2147483648", and a uint64 past INT64_MAX read as "got -1").
      {R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":2147483648,)"
       R"("num_hidden_layers":2})",
       {"/tmp/bad/config.json",
        "field 'num_attention_heads' must be a positive integer at most 2147483647, got "
        "2147483648"}},
      {R"({"model_type":"mistral","hidden_size":4096,"num_attention_heads":32,)"
       R"("num_hidden_layers":2,"sliding_window":1000000000000})",
       {"field 'sliding_window' must be a positive integer at most 2147483647, got 1000000000000"}},
      {R"({"model_type":"gemma2","hidden_size":4096,"num_attention_heads":32,)"
       R"("num_hidden_layers":2,"query_pre_attn_scalar":0})",
       {"/tmp/bad/config.json", "field 'query_pre_attn_scalar' must be a positive number, got 0"}},
      {R"({"model_type":"granite","hidden_size":4096,"num_attention_heads":32,)"
       R"("num_hidden_layers":2,"attention_multiplier":"0.01"})",
       {"/tmp/bad/config.json", "'attention_multiplier' must be a number"}},
      {R"({"model_type":"deepseek_v3","hidden_size":7168,"num_attention_heads":128,)"
       R"("num_hidden_layers":2,"rope_scaling":{"type":"yarn","factor":-4}})",
       {"field 'rope_scaling.factor' must be a positive number, got -4"}},
      {R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":18446744073709551615,)"
       R"("num_hidden_layers":2})",
       {"'num_attention_heads' must be a positive integer at most 2147483647, got "
        "18446744073709551615"}},
      {R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"head_dim":1e300,)"
       R"("num_hidden_layers":2})",
       {"'head_dim' must be a positive integer at most 2147483647, got 1e+300"}},
      {R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"num_hidden_layers":-3})",
       {"/tmp/bad/config.json", "'num_hidden_layers'", "got -3"}},
      {R"({"model_type":"llama","hidden_size":4000,"num_attention_heads":48,"num_hidden_layers":2})",
       {"/tmp/bad/config.json", "'hidden_size' (4000) is not divisible by 'num_attention_heads'"}},
      {R"({"model_type":"phi3","num_attention_heads":32,"num_hidden_layers":2})",
       {"/tmp/bad/config.json", "field 'hidden_size' is missing", "head_dim"}},
      {R"({"model_type":"llama", "hidden_size": 4096,,})",
       {"/tmp/bad/config.json: not valid JSON", "line 1, column"}},
      {"[1, 2]", {"/tmp/bad/config.json", "top level must be a JSON object"}},
      {R"({"hidden_size":4096,"num_attention_heads":32,"num_hidden_layers":2})",
       {"/tmp/bad/config.json: field 'model_type' is missing"}},
      {R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":32,)"
       R"("num_key_value_heads":5,"num_hidden_layers":2})",
       {"/tmp/bad/config.json", "'num_attention_heads' (32) is not a multiple"}},
      {R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":32,)"
       R"("num_hidden_layers":2,"torch_dtype":"int8"})",
       {"/tmp/bad/config.json", "'torch_dtype' is 'int8'"}},
      {R"({"model_type":"x","hidden_size":64,"num_attention_heads":2,"num_hidden_layers":2,)"
       R"("layer_types":["full_attention"]})",
       {"/tmp/bad/config.json", "'layer_types' has 1 entries; expected one per layer (2)"}},
      {R"({"model_type":"x","hidden_size":64,"num_attention_heads":2,"num_hidden_layers":2,)"
       R"("layer_types":["full_attention","chunked_attention"]})",
       {"/tmp/bad/config.json", "'layer_types[1]'", "chunked_attention"}},
      // (a type without MLA defaults: DeepSeek's would supply qk_rope_head_dim 64)
      {R"({"model_type":"x","hidden_size":7168,"num_attention_heads":128,)"
       R"("num_hidden_layers":2,"kv_lora_rank":512,"qk_nope_head_dim":128,"v_head_dim":128})",
       {"/tmp/bad/config.json", "field 'qk_rope_head_dim' is missing"}},
      {R"({"model_type":"nemotron_h","hidden_size":64,"num_attention_heads":2,)"
       R"("num_hidden_layers":2,"hybrid_override_pattern":"M*"})",
       {"/tmp/bad/config.json", "'mamba_num_heads' is missing", "mamba state"}},
      {R"({"model_type":"nemotron_h","hidden_size":64,"num_attention_heads":2,)"
       R"("num_hidden_layers":2,"hybrid_override_pattern":"M?"})",
       {"/tmp/bad/config.json", "'hybrid_override_pattern' has '?' at position 1"}},
      {R"({"model_type":"paligemma","text_config":{"hidden_size":2048,)"
       R"("num_attention_heads":"8"}})",
       {"/tmp/bad/config.json", "'text_config.num_attention_heads'"}},
      {R"({"model_type":"t5","d_model":512,"num_heads":8,"num_layers":6})",
       {"/tmp/bad/config.json", "field 'd_kv' is missing"}},
      {R"({"model_type":"gemma2","hidden_size":64,"num_attention_heads":2,"num_hidden_layers":2,)"
       R"("attn_logit_softcapping":-1})",
       {"/tmp/bad/config.json", "'attn_logit_softcapping' must be >= 0"}},
      // Layer counts past 65536: refused before a layer is built (2^31 - 1 kept `plan` busy).
      {R"({"model_type":"llama","hidden_size":64,"num_attention_heads":2,)"
       R"("num_hidden_layers":2147483647})",
       {"/tmp/bad/config.json", "field 'num_hidden_layers' is 2147483647; expected at most 65536"}},
      {R"({"model_type":"gpt2","n_embd":64,"n_head":2,"n_layer":65537})",
       {"/tmp/bad/config.json", "field 'n_layer' is 65537; expected at most 65536"}},
      {R"({"model_type":"t5","d_model":512,"num_heads":8,"d_kv":64,"num_layers":6,)"
       R"("num_decoder_layers":100000})",
       {"/tmp/bad/config.json", "field 'num_decoder_layers' is 100000"}},
      {R"({"model_type":"bart","d_model":64,"encoder_layers":70000,"decoder_layers":2,)"
       R"("encoder_attention_heads":2,"decoder_attention_heads":2})",
       {"/tmp/bad/config.json", "field 'encoder_layers' is 70000"}},
      // Baichuan's position scheme comes from its architecture name.
      {R"({"model_type":"baichuan","hidden_size":5120,"num_attention_heads":40,)"
       R"("num_hidden_layers":2})",
       {"/tmp/bad/config.json", "model_type 'baichuan' needs 'architectures'"}},
      {R"({"architectures":["BaichuanM1ForCausalLM"],"model_type":"baichuan",)"
       R"("hidden_size":5120,"num_attention_heads":40,"num_hidden_layers":2})",
       {"/tmp/bad/config.json", "architecture 'BaichuanM1ForCausalLM': expected"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.json);
    const std::string what = error_of(c.json);
    for (const auto& e : c.expected) EXPECT_THAT(what, HasSubstr(e));
  }
}

TEST(ModelErrors, UnknownShortNameListsBundledModels) {
  try {
    load_model("llama-9");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("model 'llama-9'"));
    EXPECT_THAT(e.what(), HasSubstr("gemma-2-9b"));
    EXPECT_THAT(e.what(), HasSubstr("t5-small"));
  }
}

TEST(ModelErrors, MissingFileNamesThePath) {
  EXPECT_THROW(
      {
        try {
          load_model("/nonexistent/dir/config.json");
        } catch (const InvalidArgument& e) {
          EXPECT_THAT(e.what(), HasSubstr("/nonexistent/dir/config.json: no such file"));
          throw;
        }
      },
      InvalidArgument);
}

TEST(ModelErrors, BadBlockSizeOption) {
  ModelLoadOptions o;
  o.block_size = 0;
  EXPECT_THROW(load_model("llama-3.2-1b", o), InvalidArgument);
}

}  // namespace
}  // namespace attnkit
