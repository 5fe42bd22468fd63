// Hugging Face config.json -> ModelSpec.
//
// Layer numbering is the model's own: layer i of num_hidden_layers is index i. Encoder-decoder
// models number the encoder layers first (0 .. E-1) and the decoder layers after them
// (E .. E+D-1); decoder layer E+j has two attention modules, its causal self-attention (kDecoder,
// index E+j) and its cross-attention (kCross, index E+D+j, listed after every self-attention), so
// every attention module has its own index (the KV cache keys layers by it). Non-attention layers
// (mamba, linear attention) keep their index in state_layers; MLP/MoE-only layers of
// Nemotron-H's pattern appear in neither list but count in ModelSpec::num_layers.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "attnkit/error.hpp"
#include "attnkit/log.hpp"
#include "attnkit/model.hpp"
#include "core/strings.hpp"
#include "model/config_fields.hpp"
#include "model/state_bytes.hpp"

namespace attnkit {

using model_detail::ConfigFields;
using model_detail::json;

namespace {

// Keys that transformers' config classes default when a config omits them, for the
// architectures whose published configs rely on it (only keys that shape attention):
// - gemma (GemmaConfig): PaliGemma's text_config states only hidden_size, heads, kv heads and
//   layers; head_dim is then GemmaConfig's 256 (== 2048 / 8 there, but Gemma-7B has 3072 / 16 =
//   192 != 256, so hidden / heads would be wrong in general). num_key_value_heads is not
//   defaulted (GemmaConfig's 16 only fits 16-head models); absent, it means MHA as elsewhere.
// - gemma2 (Gemma2Config): head_dim 256, sliding_window 4096, attn_logit_softcapping 50.0,
//   query_pre_attn_scalar 256.
// - gemma3_text (Gemma3TextConfig): head_dim 256, query_pre_attn_scalar 256, sliding_window 4096,
//   sliding_window_pattern 6, 8 heads over 4 KV heads, 26 layers, 131072 positions. Gemma 3 4B's
//   published config states none of the head counts (its text_config: hidden and intermediate
//   sizes, 34 layers, rope scaling, sliding_window 1024), so they come from here.
// - deepseek_v2, deepseek_v3, deepseek_v32, kimi_k2 (DeepseekV2Config / DeepseekV3Config): the MLA
//   dims (kv_lora_rank 512, q_lora_rank 1536, qk_nope 128, qk_rope 64, v 128) and 2048 (v2) or
//   4096 (v3) positions. MLA is on when kv_lora_rank has a value, so without these a config that
//   omits kv_lora_rank would be read as MHA with head size hidden / heads (56 for V3).
// - glm4_moe_lite (Glm4MoeLiteConfig): kv_lora_rank 512, q_lora_rank 768, qk_nope 192, qk_rope
//   64, v 256, 202752 positions.
// - llama4_text (Llama4TextConfig): attention_chunk_size 8192, no_rope_layer_interval 4, 40 heads
//   over 8 KV heads, head_dim 128, 48 layers (the chunked layers: build_standard).
// - llama (LlamaConfig): hidden 4096, 32 heads, 32 layers, 2048 positions. llava-1.5's
//   text_config states none of them (vicuna's are the defaults).
// - mistral (MistralConfig): hidden 4096, 32 heads, 32 layers, 131072 positions, sliding_window
//   4096 (an explicit null keeps it off). llava-v1.6-mistral's text_config states the KV heads
//   and the window, not the rest.
// - qwen2, qwen3 (Qwen2Config, Qwen3Config): hidden 4096, 32 heads, 32 layers, 32768 positions,
//   use_sliding_window false (so a stated sliding_window stays off unless switched on; vLLM reads
//   the attribute), max_window_layers 28; Qwen3's head_dim 128. Their KV heads are not defaulted
//   (Mistral's 8 and Qwen's 32 fit their 32-head defaults only): absent, they mean MHA.
// - zamba2 (Zamba2Config): hidden 2560, 32 heads, 54 layers with their layers_block_type (hybrid
//   at 6, 12, .., 42, 47, 51), 4096 positions, one shared block, and the Mamba2 fields (d_state
//   64, d_conv 4, expand 2, one group, 8 heads).
// The table applies to the config the attention fields are read from: the top level, or the
// text_config (keyed by its own model_type, else the composite class's default text type). A key
// present with null keeps its meaning ("q_lora_rank": null = full-rank queries, "kv_lora_rank":
// null = no MLA), as in transformers.
const json* architecture_defaults(std::string_view model_type) {
  static const json kGemma = {{"head_dim", 256},
                              {"hidden_size", 3072},
                              {"num_attention_heads", 16},
                              {"num_hidden_layers", 28},
                              {"max_position_embeddings", 8192}};
  static const json kGemma2 = {{"head_dim", 256},
                               {"sliding_window", 4096},
                               {"attn_logit_softcapping", 50.0},
                               {"query_pre_attn_scalar", 256}};
  static const json kGemma3 = {{"head_dim", 256},          {"query_pre_attn_scalar", 256},
                               {"sliding_window", 4096},   {"sliding_window_pattern", 6},
                               {"num_attention_heads", 8}, {"num_key_value_heads", 4},
                               {"num_hidden_layers", 26},  {"max_position_embeddings", 131072}};
  auto mla = [](int q_lora, int nope, int v, int64_t positions) {
    return json{{"kv_lora_rank", 512},      {"q_lora_rank", q_lora},
                {"qk_nope_head_dim", nope}, {"qk_rope_head_dim", 64},
                {"v_head_dim", v},          {"max_position_embeddings", positions}};
  };
  static const json kDeepseekV2 = mla(1536, 128, 128, 2048);
  static const json kDeepseekV3 = mla(1536, 128, 128, 4096);
  static const json kGlm4MoeLite = mla(768, 192, 256, 202752);
  static const json kLlama4 = {{"attention_chunk_size", 8192},
                               {"no_rope_layer_interval", 4},
                               {"num_attention_heads", 40},
                               {"num_key_value_heads", 8},
                               {"head_dim", 128},
                               {"num_hidden_layers", 48}};
  if (model_type == "gemma") return &kGemma;
  if (model_type == "gemma2") return &kGemma2;
  if (model_type == "gemma3_text") return &kGemma3;
  if (model_type == "deepseek_v2") return &kDeepseekV2;
  if (model_type == "deepseek_v3" || model_type == "deepseek_v32" || model_type == "kimi_k2")
    return &kDeepseekV3;
  if (model_type == "glm4_moe_lite") return &kGlm4MoeLite;
  static const json kZamba2 = [] {
    json types = json::array({"mamba"});
    auto add = [&](int mamba, bool hybrid) {
      for (int i = 0; i < mamba; ++i) types.push_back("mamba");
      if (hybrid) types.push_back("hybrid");
    };
    for (int i = 0; i < 7; ++i) add(5, true);
    add(4, true);
    add(3, true);
    add(2, false);
    return json{{"hidden_size", 2560},
                {"num_attention_heads", 32},
                {"num_hidden_layers", 54},
                {"layers_block_type", types},
                {"max_position_embeddings", 4096},
                {"num_mem_blocks", 1},
                {"mamba_d_state", 64},
                {"mamba_d_conv", 4},
                {"mamba_expand", 2},
                {"mamba_ngroups", 1},
                {"n_mamba_heads", 8}};
  }();
  static const json kLlama = {{"hidden_size", 4096},
                              {"num_attention_heads", 32},
                              {"num_hidden_layers", 32},
                              {"max_position_embeddings", 2048}};
  static const json kMistral = {{"hidden_size", 4096},
                                {"num_attention_heads", 32},
                                {"num_hidden_layers", 32},
                                {"max_position_embeddings", 131072},
                                {"sliding_window", 4096}};
  auto qwen = [](bool head_dim) {
    json j = {{"hidden_size", 4096},         {"num_attention_heads", 32},
              {"num_hidden_layers", 32},     {"max_position_embeddings", 32768},
              {"use_sliding_window", false}, {"sliding_window", 4096},
              {"max_window_layers", 28}};
    if (head_dim) j["head_dim"] = 128;
    return j;
  };
  static const json kQwen2 = qwen(false);
  static const json kQwen3 = qwen(true);
  if (model_type == "llama4_text") return &kLlama4;
  if (model_type == "zamba2") return &kZamba2;
  if (model_type == "llama") return &kLlama;
  if (model_type == "mistral") return &kMistral;
  if (model_type == "qwen2") return &kQwen2;
  if (model_type == "qwen3") return &kQwen3;
  return nullptr;
}

// model_type of a multimodal config's text_config when the text_config does not state it (the
// default sub-config of transformers' composite config class).
std::string default_text_model_type(std::string_view top) {
  if (top == "gemma3") return "gemma3_text";
  if (top == "gemma3n") return "gemma3n_text";
  if (top == "gemma4") return "gemma4_text";
  if (top == "paligemma") return "gemma";
  if (top == "llama4") return "llama4_text";
  return std::string(top);
}

// Decoder model types whose config conventions this reader follows (their quirks are handled
// below, or they have none); any other type is read the same llama-like way, with a note.
bool is_known_decoder_type(std::string_view t) {
  static const std::set<std::string, std::less<>> kTypes = {"llama",
                                                            "mistral",
                                                            "mixtral",
                                                            "qwen2",
                                                            "qwen2_moe",
                                                            "qwen3",
                                                            "qwen3_moe",
                                                            "qwen3_next",
                                                            "phi3",
                                                            "gemma",
                                                            "gemma2",
                                                            "gemma3",
                                                            "gemma3_text",
                                                            "gemma3n",
                                                            "gemma3n_text",
                                                            "gemma4",
                                                            "gemma4_text",
                                                            "paligemma",
                                                            "cohere2",
                                                            "falcon",
                                                            "RefinedWeb",
                                                            "RefinedWebModel",
                                                            "mpt",
                                                            "bloom",
                                                            "gpt_oss",
                                                            "deepseek_v2",
                                                            "deepseek_v3",
                                                            "deepseek_v32",
                                                            "kimi_k2",
                                                            "kimi_linear",
                                                            "glm4_moe_lite",
                                                            "nemotron_h",
                                                            "jamba",
                                                            "bamba",
                                                            "falcon_h1",
                                                            "lfm2",
                                                            "minimax_text_01",
                                                            "minicpm",
                                                            "minicpm3",
                                                            "zamba2",
                                                            "llama4",
                                                            "llama4_text",
                                                            "granite",
                                                            "granitemoe",
                                                            "granitemoeshared",
                                                            "granitemoehybrid",
                                                            "exaone4",
                                                            "baichuan",
                                                            "olmo2",
                                                            "olmo3",
                                                            "internlm2",
                                                            "qwen2_5_omni_text",
                                                            "qwen3_omni_moe_text",
                                                            "qwen2_vl",
                                                            "qwen2_vl_text",
                                                            "qwen2_5_vl",
                                                            "qwen2_5_vl_text",
                                                            "qwen3_vl",
                                                            "qwen3_vl_text",
                                                            "qwen3_vl_moe",
                                                            "qwen3_vl_moe_text"};
  return kTypes.count(t) > 0;
}

// Bidirectional encoders with the standard HF attention fields (no cache; ModernBERT's local
// layers have a symmetric window).
bool is_encoder_only_type(std::string_view t) {
  static const std::set<std::string, std::less<>> kTypes = {
      "bert",       "roberta",       "xlm-roberta", "camembert", "electra",
      "ernie",      "nomic_bert",    "mpnet",       "deberta",   "deberta-v2",
      "distilbert", "data2vec-text", "roformer",    "xlm",       "modernbert"};
  return kTypes.count(t) > 0;
}

bool is_t5_type(std::string_view t) {
  return t == "t5" || t == "mt5" || t == "umt5" || t == "switch_transformers";
}

bool is_bart_type(std::string_view t) {
  static const std::set<std::string, std::less<>> kTypes = {
      "bart", "mbart", "marian", "pegasus", "m2m_100", "blenderbot", "plbart", "whisper"};
  return kTypes.count(t) > 0;
}

// vLLM ModelConfig.is_mm_prefix_lm: multimodal prefix tokens attend bidirectionally.
bool is_mm_prefix_type(std::string_view t) {
  return t == "bagel" || t == "gemma3" || t == "molmo2" || t == "moondream3" || t == "paligemma" ||
         t == "umm";
}

std::optional<DType> read_dtype(const ConfigFields& f, std::string_view key) {
  auto s = f.get_string(key);
  if (!s) return std::nullopt;
  try {
    return parse_dtype(*s);
  } catch (const InvalidArgument&) {
    f.fail(fmt::format("field '{}' is '{}'; expected one of float32, float16, bfloat16",
                       f.name(key), *s));
  }
}

std::optional<DType> read_any_dtype(const ConfigFields& f) {
  // transformers >= 4.56 writes "dtype"; older files "torch_dtype".
  if (auto d = read_dtype(f, "dtype")) return d;
  return read_dtype(f, "torch_dtype");
}

// kLinear: Gated DeltaNet (Qwen3-Next); kLightning: MiniMax's lightning linear attention.
enum class LayerKind { kFull, kSliding, kChunked, kLinear, kLightning, kMamba, kShortConv, kNone };

// A checkpoint's KV cache format (quantization_config), which `auto` becomes.
struct CheckpointKv {
  KvCacheDType dtype = KvCacheDType::kAuto;
  ScaleGranularity granularity = ScaleGranularity::kNone;
};

struct Builder {
  const ModelLoadOptions& options;
  DType dtype;
  CheckpointKv kv;    // every attention layer's cache format
  bool encoder_only;  // encoder_only_reason: bidirectional layers over their own K/V

  LayerSpec base(int index, AttentionType type) const {
    LayerSpec l;
    l.layer_index = index;
    l.attn_type = type;
    l.dtype = dtype;
    l.kv_cache_dtype = kv.dtype;
    l.kv_scale_granularity = kv.granularity;
    l.block_size = options.block_size;
    return l;
  }
};

// The KV cache format a checkpoint was calibrated for, as vLLM reads quantization_config:
// compressed-tensors' (and flat ModelOpt's) kv_cache_scheme of 8-bit floats is fp8 e4m3 with
// per-tensor scales, or per KV head with strategy attn_head (llm-compressor's per-head
// calibration); ModelOpt's kv_cache_quant_algo FP8 or NVFP4. Any other scheme is refused by name.
// None without one. `top` is the top level, or a multimodal config's text config.
std::optional<CheckpointKv> checkpoint_kv_cache(const ConfigFields& top) {
  const json* q = top.find("quantization_config");
  if (!q) return std::nullopt;
  if (!q->is_object()) top.fail_type("quantization_config", *q, "an object");
  const ConfigFields qc(*q, top.source(), top.name("quantization_config."));
  if (const json* s = qc.find("kv_cache_scheme")) {
    if (!s->is_object()) qc.fail_type("kv_cache_scheme", *s, "an object or null");
    const ConfigFields kv(*s, top.source(), qc.name("kv_cache_scheme."));
    const auto bits = kv.get_int("num_bits");
    const auto type = kv.get_string("type");
    if (bits != 8 || type != "float")
      kv.fail(fmt::format("{} is {}-bit {}: the KV cache formats are 8-bit float (fp8) schemes",
                          qc.name("kv_cache_scheme"), bits ? std::to_string(*bits) : "?",
                          type.value_or("?")));
    const std::string strategy = kv.get_string("strategy").value_or("tensor");
    if (strategy != "tensor" && strategy != "attn_head")
      kv.fail(
          fmt::format("field '{}' is '{}'; fp8 KV caches take per-tensor (tensor) or per-head "
                      "(attn_head) scales",
                      kv.name("strategy"), strategy));
    return CheckpointKv{KvCacheDType::kFp8E4M3, strategy == "attn_head"
                                                    ? ScaleGranularity::kPerHead
                                                    : ScaleGranularity::kPerTensor};
  }
  const ConfigFields* algo_src = &qc;
  std::optional<ConfigFields> nested;  // ModelOpt's hf_quant_config layout, copied inline
  if (const json* n = qc.find("quantization"); n && n->is_object()) {
    nested.emplace(*n, top.source(), qc.name("quantization."));
    algo_src = &*nested;
  }
  const auto algo = algo_src->get_string("kv_cache_quant_algo");
  if (!algo) return std::nullopt;
  if (*algo == "FP8") return CheckpointKv{KvCacheDType::kFp8E4M3, ScaleGranularity::kPerTensor};
  if (*algo == "NVFP4")
    return CheckpointKv{KvCacheDType::kNvfp4,
                        kv_format_info(KvCacheDType::kNvfp4).default_scale_granularity};
  algo_src->fail(fmt::format("field '{}' is '{}'; expected FP8 or NVFP4",
                             algo_src->name("kv_cache_quant_algo"), *algo));
}

int head_size_from_hidden(const ConfigFields& f, int heads, std::string_view heads_key) {
  std::string_view hidden_key;
  const int hidden = f.require_positive({"hidden_size", "d_model", "n_embd", "n_embed", "dim"},
                                        "to derive the head size when 'head_dim' is absent");
  f.find_any({"hidden_size", "d_model", "n_embd", "n_embed", "dim"}, &hidden_key);
  if (hidden % heads != 0) {
    f.fail(fmt::format(
        "field '{}' ({}) is not divisible by '{}' ({}) and 'head_dim' is absent; expected "
        "hidden size = heads * head size, or an explicit head_dim",
        f.name(hidden_key), hidden, f.name(heads_key), heads));
  }
  return hidden / heads;
}

// Every layer gets an entry of its own, so layer counts are bounded where they are read: past
// kMaxLayers (published models have at most a few hundred) the config is taken for a corrupt one
// (2^31 - 1 layers kept `attnkit plan` busy for minutes).
constexpr int kMaxLayers = 1 << 16;

// ---- encoder-decoder -------------------------------------------------------------------------

void build_encoder_decoder(const ConfigFields& f, bool t5, const Builder& b, ModelSpec& spec) {
  int enc_layers, dec_layers, enc_heads, dec_heads, enc_head, dec_head;
  if (t5) {
    enc_layers = f.require_positive("num_layers", "for the number of encoder layers", kMaxLayers);
    // T5Config: num_decoder_layers defaults to num_layers.
    dec_layers = f.get_positive("num_decoder_layers", kMaxLayers).value_or(enc_layers);
    enc_heads = dec_heads = f.require_positive("num_heads", "for the number of attention heads");
    // T5 states the head size (d_kv) independently of d_model.
    enc_head = dec_head = f.require_positive("d_kv", "for the head size");
  } else {
    enc_layers =
        f.require_positive("encoder_layers", "for the number of encoder layers", kMaxLayers);
    dec_layers =
        f.require_positive("decoder_layers", "for the number of decoder layers", kMaxLayers);
    enc_heads = f.require_positive("encoder_attention_heads", "for the encoder's heads");
    dec_heads = f.require_positive("decoder_attention_heads", "for the decoder's heads");
    enc_head = head_size_from_hidden(f, enc_heads, "encoder_attention_heads");
    dec_head = head_size_from_hidden(f, dec_heads, "decoder_attention_heads");
  }
  auto make = [&](int index, AttentionType type, int heads, int head) {
    LayerSpec l = b.base(index, type);
    l.num_heads = l.num_kv_heads = heads;
    l.head_size = l.head_size_v = head;
    // T5 takes its logits unscaled (its initialization folds 1/sqrt(d_kv) into the weights).
    if (t5) l.softmax_scale = 1.0;
    return l;
  };
  for (int i = 0; i < enc_layers; ++i) {
    spec.attention_layers.push_back(make(i, AttentionType::kEncoder, enc_heads, enc_head));
  }
  for (int j = 0; j < dec_layers; ++j)
    spec.attention_layers.push_back(
        make(enc_layers + j, AttentionType::kDecoder, dec_heads, dec_head));
  for (int j = 0; j < dec_layers; ++j)
    spec.attention_layers.push_back(
        make(enc_layers + dec_layers + j, AttentionType::kCross, dec_heads, dec_head));
  spec.num_layers = enc_layers + dec_layers;
  spec.is_encoder_decoder = true;
  if (auto p = f.get_int("n_positions")) spec.max_position_embeddings = *p;
  // Whisper: max_target_positions for the decoder, max_source_positions for the encoder input.
  if (auto p = f.get_positive("max_target_positions")) spec.max_position_embeddings = *p;
  if (auto p = f.get_int("max_position_embeddings")) spec.max_position_embeddings = *p;
  if (auto p = f.get_positive("max_source_positions")) spec.max_encoder_positions = *p;
}

// ---- per-layer kinds ---------------------------------------------------------------------------

std::vector<LayerKind> kinds_from_layer_types(const ConfigFields& f, const json& types,
                                              int num_layers) {
  if (!types.is_array()) f.fail_type("layer_types", types, "an array of strings");
  if (int(types.size()) != num_layers) {
    f.fail(fmt::format("field '{}' has {} entries; expected one per layer ({})",
                       f.name("layer_types"), types.size(), num_layers));
  }
  std::vector<LayerKind> kinds;
  for (size_t i = 0; i < types.size(); ++i) {
    const json& t = types[i];
    const std::string s = t.is_string() ? t.get<std::string>() : std::string();
    if (s == "full_attention" || s == "attention") {
      kinds.push_back(LayerKind::kFull);
    } else if (s == "sliding_attention") {
      kinds.push_back(LayerKind::kSliding);
    } else if (s == "chunked_attention") {
      kinds.push_back(LayerKind::kChunked);
    } else if (s == "linear_attention") {
      kinds.push_back(LayerKind::kLinear);
    } else if (s == "mamba") {
      kinds.push_back(LayerKind::kMamba);
    } else if (s == "conv") {
      kinds.push_back(LayerKind::kShortConv);
    } else {
      f.fail(
          fmt::format("field '{}[{}]' is {}; expected one of full_attention, sliding_attention, "
                      "chunked_attention, linear_attention, mamba, conv, attention",
                      f.name("layer_types"), i, model_detail::describe(t)));
    }
  }
  return kinds;
}

// Attention at the layers `key` lists (each once, in range), `other` elsewhere: Bamba's
// attn_layer_indices, LFM2's full_attn_idxs.
std::vector<LayerKind> kinds_from_attention_indices(const ConfigFields& f, std::string_view key,
                                                    const json& indices, int num_layers,
                                                    LayerKind other) {
  if (!indices.is_array()) f.fail_type(key, indices, "an array of layer indices");
  std::vector<LayerKind> kinds(num_layers, other);
  for (size_t k = 0; k < indices.size(); ++k) {
    const json& v = indices[k];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= num_layers ||
        kinds[v.get<int64_t>()] == LayerKind::kFull)
      f.fail(fmt::format("field '{}[{}]' is {}; expected a layer index in 0 .. {}, each once",
                         f.name(key), k, v.dump(), num_layers - 1));
    kinds[v.get<int64_t>()] = LayerKind::kFull;
  }
  return kinds;
}

// Llama 4 without layer_types (transformers derives them the same way): layers with RoPE are
// chunked, the NoPE ones (no_rope_layers[i] == 0, else every no_rope_layer_interval-th layer)
// attend fully.
std::vector<LayerKind> llama4_kinds(const ConfigFields& f, int num_layers) {
  std::vector<LayerKind> kinds;
  const json* nr = f.find("no_rope_layers");
  if (nr && !nr->is_array()) f.fail_type("no_rope_layers", *nr, "an array of 0 / 1 per layer");
  if (nr && !nr->empty()) {
    if (int(nr->size()) != num_layers)
      f.fail(fmt::format("field '{}' has {} entries; expected one per layer ({})",
                         f.name("no_rope_layers"), nr->size(), num_layers));
    for (size_t i = 0; i < nr->size(); ++i) {
      const json& v = (*nr)[i];
      if (!v.is_number_integer() || (v.get<int64_t>() != 0 && v.get<int64_t>() != 1))
        f.fail(fmt::format("field '{}[{}]' is {}; expected 0 (NoPE) or 1 (RoPE)",
                           f.name("no_rope_layers"), i, model_detail::describe(v)));
      kinds.push_back(v.get<int64_t>() == 1 ? LayerKind::kChunked : LayerKind::kFull);
    }
    return kinds;
  }
  const int every = f.require_positive("no_rope_layer_interval", "for Llama 4's NoPE layers");
  for (int i = 0; i < num_layers; ++i)
    kinds.push_back((i + 1) % every != 0 ? LayerKind::kChunked : LayerKind::kFull);
  return kinds;
}

// Nemotron-H: 'M' Mamba2, '*' attention, '-' MLP, 'E' MoE (neither attention nor state).
std::vector<LayerKind> kinds_from_pattern(const ConfigFields& f, const std::string& pattern,
                                          int num_layers) {
  if (int(pattern.size()) != num_layers) {
    f.fail(fmt::format("field '{}' has {} characters; expected one per layer ({})",
                       f.name("hybrid_override_pattern"), pattern.size(), num_layers));
  }
  std::vector<LayerKind> kinds;
  for (size_t i = 0; i < pattern.size(); ++i) {
    switch (pattern[i]) {
      case 'M':
        kinds.push_back(LayerKind::kMamba);
        break;
      case '*':
        kinds.push_back(LayerKind::kFull);
        break;
      case '-':
      case 'E':
        kinds.push_back(LayerKind::kNone);
        break;
      default:
        f.fail(
            fmt::format("field '{}' has '{}' at position {}; expected M (mamba), * "
                        "(attention), - (MLP) or E (MoE)",
                        f.name("hybrid_override_pattern"), pattern[i], i));
    }
  }
  return kinds;
}

// The sliding window that applies to sliding layers, or none when the config sets a window but
// disables it.
std::optional<int> effective_window(const ConfigFields& f, const ConfigFields* attn_config,
                                    int64_t max_positions) {
  std::optional<int> window = f.get_positive("sliding_window");
  if (!window && attn_config) {
    // MPT: attn_config.sliding_window_size, -1 = off.
    if (auto w = attn_config->get_int("sliding_window_size"); w && *w > 0) {
      window = attn_config->get_positive("sliding_window_size");
    }
  }
  if (!window) return std::nullopt;
  // Qwen2/Qwen3 keep a sliding_window value but switch it off with use_sliding_window=false.
  if (f.get_bool("use_sliding_window") == false) return std::nullopt;
  // A window at least as long as the longest sequence masks nothing (Phi-3.5-mini: 262144 >
  // 131072): treat it as full attention so no backend is rejected for a window it never
  // applies.
  if (max_positions > 0 && *window >= max_positions) {
    log(LogLevel::kDebug,
        fmt::format("{}: sliding_window {} >= max_position_embeddings {}: no window", f.source(),
                    *window, max_positions));
    return std::nullopt;
  }
  return window;
}

// The softmax scale of the model's attention code (vLLM's Attention(scale=...)), or none for
// 1/sqrt(QK head size). Each layer keeps it only where it differs from its own default.
std::optional<double> model_softmax_scale(const ConfigFields& f, const ConfigFields* attn_config,
                                          std::string_view text_type,
                                          const std::optional<MlaDims>& mla, int head_size) {
  auto positive = [&](const ConfigFields& src, std::string_view key) -> std::optional<double> {
    const std::optional<double> v = src.get_number(key);
    if (v && !(*v > 0 && std::isfinite(*v)))
      src.fail(fmt::format("field '{}' must be a positive number, got {}", src.name(key), *v));
    return v;
  };
  // Gemma 3n and 4 normalize q and k (q_norm, k_norm) and take the logits unscaled.
  if (text_type == "gemma3n_text" || text_type == "gemma3n" || text_type == "gemma4_text" ||
      text_type == "gemma4")
    return 1.0;
  // Gemma 2 and 3: query_pre_attn_scalar^-0.5 (27B models: 144 or 168 over heads of 128).
  if (text_type == "gemma2" || text_type == "gemma3_text") {
    if (auto q = positive(f, "query_pre_attn_scalar")) return 1.0 / std::sqrt(*q);
  }
  // Zamba2: (head size / 2)^-0.5 (vLLM's Zamba2Attention, over heads of 2 x hidden / heads).
  if (text_type == "zamba2") return 1.0 / std::sqrt(head_size / 2.0);
  // Granite (granite, granitemoe, granitemoehybrid): the scale is attention_multiplier.
  if (auto m = positive(f, "attention_multiplier")) return *m;
  // MPT: attn_config.softmax_scale (null: the default).
  if (attn_config) {
    if (auto m = positive(*attn_config, "softmax_scale")) return *m;
  }
  // DeepSeek-V2/V3 MLA with YaRN: the default times mscale^2, mscale = 0.1 * mscale_all_dim *
  // ln(factor) + 1 for a factor above 1 (DeepseekV2Attention's yarn_get_mscale).
  if (mla) {
    std::string_view key = "rope_scaling";
    const json* rs = f.find_any({"rope_scaling", "rope_parameters"}, &key);
    if (rs && rs->is_object()) {
      const ConfigFields r(*rs, f.source(), f.name(std::string(key) + "."));
      const double factor = positive(r, "factor").value_or(1.0);
      const double all_dim = r.get_number("mscale_all_dim").value_or(0.0);
      if (factor > 1.0 && all_dim != 0.0) {
        const double mscale = 0.1 * all_dim * std::log(factor) + 1.0;
        return mscale * mscale / std::sqrt(double(mla->prefill_qk_head_size()));
      }
    }
  }
  return std::nullopt;
}

// Which layers are sliding when the config gives a window but no layer_types.
std::vector<LayerKind> implied_sliding(const ConfigFields& f, std::string_view text_type,
                                       int num_layers) {
  std::vector<LayerKind> kinds(num_layers, LayerKind::kSliding);
  if (const json* pat = f.find("sliding_window_pattern"); pat && pat->is_string()) {
    // EXAONE 4: a string of L (local: sliding) and G (global) layers, repeated over the layers.
    const std::string s = pat->get<std::string>();
    if (s.empty() || s.find_first_not_of("LG") != std::string::npos)
      f.fail(
          fmt::format("field '{}' is \"{}\"; expected a positive integer (every n-th layer full) "
                      "or a string of L (sliding) and G (full) layers such as \"LLLG\"",
                      f.name("sliding_window_pattern"), s));
    for (int i = 0; i < num_layers; ++i)
      if (s[size_t(i) % s.size()] == 'G') kinds[i] = LayerKind::kFull;
  } else if (auto p = f.get_positive("sliding_window_pattern")) {
    // Gemma-3 / Cohere2: every p-th layer is full (transformers: is_sliding = (i + 1) % p).
    for (int i = 0; i < num_layers; ++i) {
      if ((i + 1) % *p == 0) kinds[i] = LayerKind::kFull;
    }
  } else if (text_type == "gemma2") {
    // Gemma-2 alternates, starting with a sliding layer (transformers Gemma2: is_sliding =
    // not bool(layer_idx % 2)).
    for (int i = 0; i < num_layers; ++i) {
      if (i % 2 != 0) kinds[i] = LayerKind::kFull;
    }
  } else if (f.get_bool("use_sliding_window") == true && f.has("max_window_layers")) {
    // Qwen2 convention: layers from max_window_layers on use the window.
    const int64_t first = *f.get_int("max_window_layers");
    for (int i = 0; i < num_layers && i < first; ++i) kinds[i] = LayerKind::kFull;
  }
  // Otherwise (Mistral style) every layer uses the window.
  return kinds;
}

// ---- decoder / encoder-only -------------------------------------------------------------------

// Placeholder tokens of one image in a PrefixLM model: Gemma 3's mm_tokens_per_image,
// PaliGemma's num_image_tokens (text or vision config); Gemma 4's vision_soft_tokens_per_image.
std::optional<int> image_tokens(const json& root, const ConfigFields& top,
                                const ConfigFields& text) {
  if (auto n = top.get_positive("mm_tokens_per_image")) return n;
  if (auto n = top.get_positive("vision_soft_tokens_per_image")) return n;
  if (auto n = text.get_positive("num_image_tokens")) return n;
  if (auto n = top.get_positive("num_image_tokens")) return n;
  if (auto it = root.find("vision_config"); it != root.end() && it->is_object())
    return ConfigFields(*it, top.source(), "vision_config.").get_positive("num_image_tokens");
  return std::nullopt;
}

// Whether the model is served as a pooling model, and why: vLLM's ModelConfig runner choice.
// auto: a Sentence Transformers folder (modules.json beside the config) pools; else the first
// architecture that vLLM's registry or its class-name suffixes (_SUFFIX_TO_DEFAULTS, in their
// order) place decides; else generate. Encoder-only models only pool.
std::pair<bool, std::string> resolve_runner(const ConfigFields& top, Runner requested,
                                            std::string_view encoder_only) {
  if (!encoder_only.empty()) {
    if (requested == Runner::kGenerate)
      throw Unsupported(fmt::format(
          "{}: the model is encoder-only ({}: bidirectional, no KV cache, nothing to decode): "
          "--runner generate does not apply, as vLLM refuses it for embedding models; expected "
          "--runner auto or pooling",
          top.source(), encoder_only));
    return {true, fmt::format("encoder-only: {}", encoder_only)};
  }
  if (requested != Runner::kAuto)
    return {requested == Runner::kPooling, fmt::format("--runner {}", to_string(requested))};
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(top.source()).parent_path();
  std::error_code ec;
  if (!dir.empty() && fs::is_regular_file(dir / "modules.json", ec))
    return {true, "a Sentence Transformers folder: modules.json beside the config"};
  const json* arch = top.find("architectures");
  if (!arch || arch->is_null()) return {false, "no architectures named"};
  if (!arch->is_array()) top.fail_type("architectures", *arch, "a list of class names");
  // Registered classes whose names the suffixes would misplace (vLLM's registry generates with
  // these *Model classes).
  static const std::set<std::string, std::less<>> kGenerative = {
      "AquilaModel",       "ChatGLMModel",        "H2OVLChatModel",
      "InternVLChatModel", "MiDashengLMModel",    "NVLM_D_Model",
      "Qwen2_5OmniModel",  "SkyworkR1VChatModel", "UltravoxModel"};
  static const std::set<std::string, std::less<>> kPooling = {"GritLM"};
  static constexpr std::pair<std::string_view, bool> kSuffixes[] = {
      {"ForCausalLM", false},
      {"ForConditionalGeneration", false},
      {"ChatModel", false},
      {"LMHeadModel", false},
      {"ForTextEncoding", true},
      {"EmbeddingModel", true},
      {"ForSequenceClassification", true},
      {"ForTokenClassification", true},
      {"ForAudioClassification", true},
      {"ForImageClassification", true},
      {"ForVideoClassification", true},
      {"ClassificationModel", true},
      {"ForRewardModeling", true},
      {"RewardModel", true},
      {"Model", true}};
  for (size_t i = 0; i < arch->size(); ++i) {
    if (!(*arch)[i].is_string())
      top.fail_type(fmt::format("architectures[{}]", i), (*arch)[i], "a class name");
    const std::string name = (*arch)[i].get<std::string>();
    if (kGenerative.count(name)) return {false, "architecture " + name};
    if (kPooling.count(name)) return {true, "architecture " + name};
    for (const auto& [suffix, pooling] : kSuffixes)
      if (name.size() >= suffix.size() && name.ends_with(suffix))
        return {pooling, fmt::format("architecture {}, vLLM's default for *{}", name, suffix)};
  }
  return {false, "no architecture vLLM places"};
}

// Baichuan configs (remote code, model_type "baichuan") state no position scheme: vLLM takes it
// from the architecture. BaichuanForCausalLM runs ALiBi (Baichuan-13B, Baichuan2-13B) unless
// hidden_size is 4096 (Baichuan2-7B, RoPE); BaiChuanForCausalLM (Baichuan-7B) runs RoPE.
bool baichuan_alibi(const json& root, const ConfigFields& f, std::string_view text_type) {
  if (text_type != "baichuan") return false;
  const auto arch = root.find("architectures");
  if (arch == root.end() || !arch->is_array() || arch->empty() || !(*arch)[0].is_string())
    f.fail(
        "model_type 'baichuan' needs 'architectures' (BaichuanForCausalLM runs ALiBi unless "
        "hidden_size is 4096, BaiChuanForCausalLM RoPE); it is missing or not a list of names");
  const std::string name = (*arch)[0].get<std::string>();
  if (name == "BaiChuanForCausalLM") return false;
  if (name != "BaichuanForCausalLM")
    f.fail(
        fmt::format("model_type 'baichuan' with architecture '{}': expected "
                    "BaichuanForCausalLM or BaiChuanForCausalLM",
                    name));
  return f.get_int("hidden_size") != 4096;
}

// A decoder config made bidirectional: use_bidirectional_attention true (Gemma embedding models;
// Gemma 4's string "vision" is its image rule) or is_causal false (vLLM's Llama and Qwen decoder
// layers then run encoder-only attention, as transformers' create_causal_mask does). `cfg` is the
// config the attention fields come from (the text config of a multimodal one).
bool bidirectional_decoder(const json& cfg) {
  const auto bidi = cfg.find("use_bidirectional_attention");
  if (bidi != cfg.end() && bidi->is_boolean() && bidi->get<bool>()) return true;
  const auto causal = cfg.find("is_causal");
  return causal != cfg.end() && causal->is_boolean() && !causal->get<bool>();
}

// Where a multimodal config keeps its language model, as vLLM finds it (transformers'
// get_text_config): text_config; else llm_config (InternVL, NVLM-D: vLLM's
// _CONFIG_ATTRS_MAPPING remaps it to text_config); else the thinker's text_config (Qwen2.5-Omni,
// Qwen3-Omni, Qwen3-ASR: their get_text_config returns the thinker's). Found once per config.
struct TextConfig {
  const json* value = nullptr;  // an object; null: the top level holds the fields
  std::string name;             // its key path: the prefix of its fields in messages
  bool top_level_key = false;   // text_config or llm_config: vLLM's hf_config.text_config
  // The type its fields follow: its own model_type, else the composite class's default text
  // type; the top level's without a text config.
  std::string model_type;
};

TextConfig find_text_config(const json& root, const ConfigFields& top,
                            const std::string& model_type) {
  TextConfig t;
  t.model_type = model_type;
  for (const char* key : {"text_config", "llm_config"})
    if (auto it = root.find(key); !t.value && it != root.end() && !it->is_null()) {
      t.value = &*it;
      t.name = key;
      t.top_level_key = true;
    }
  if (auto th = root.find("thinker_config"); !t.value && th != root.end() && th->is_object())
    if (auto it = th->find("text_config"); it != th->end() && !it->is_null()) {
      t.value = &*it;
      t.name = "thinker_config.text_config";
    }
  if (!t.value) return t;
  if (!t.value->is_object()) top.fail_type(t.name, *t.value, "an object");
  const auto own = t.value->find("model_type");
  t.model_type = own != t.value->end() && own->is_string() ? own->get<std::string>()
                                                           : default_text_model_type(model_type);
  return t;
}

// Why the model's attention is encoder-only (bidirectional, no cache; empty: it is not), decided
// once for the runner and the layers.
std::string encoder_only_reason(const json& root, const TextConfig& text) {
  if (is_encoder_only_type(text.model_type)) return fmt::format("model_type '{}'", text.model_type);
  if (bidirectional_decoder(text.value ? *text.value : root))
    return "a decoder made bidirectional (is_causal false or use_bidirectional_attention true)";
  return "";
}

void build_standard(const json& root, const TextConfig& tc, const ConfigFields& top,
                    const Builder& b, ModelSpec& spec) {
  const json* text = tc.value;
  const std::string& text_key = tc.name;
  const std::string& text_type = tc.model_type;
  if (!is_known_decoder_type(text_type) && !is_encoder_only_type(text_type)) {
    // vLLM-like engines take new llama-like architectures as they come: read it, but say so.
    const bool own = text && text->contains("model_type");
    std::string note = fmt::format(
        "{}: {} '{}' is not a model type attnkit knows; its attention was read the llama way "
        "(num_attention_heads, num_key_value_heads, head_dim or hidden_size / heads, "
        "sliding_window, layer_types): check the plan against the model's attention code",
        top.source(), own ? text_key + ".model_type" : "model_type", text_type);
    log(LogLevel::kWarning, note);
    spec.notes.push_back(std::move(note));
  }
  const json* defaults = architecture_defaults(text_type);
  const ConfigFields f = text ? ConfigFields(*text, top.source(), text_key + ".", defaults)
                              : ConfigFields(root, top.source(), "", defaults);
  std::optional<ConfigFields> attn_config;
  if (const json* ac = f.find("attn_config")) {
    if (!ac->is_object()) f.fail_type("attn_config", *ac, "an object");
    attn_config.emplace(*ac, f.source(), f.name("attn_config."));
  }

  const int num_layers =
      f.require_positive({"num_hidden_layers", "n_layer", "n_layers", "num_layers"},
                         "for the number of layers", kMaxLayers);
  std::string_view heads_key = "num_attention_heads";
  f.find_any({"num_attention_heads", "n_head", "n_heads", "num_heads"}, &heads_key);
  const int heads = f.require_positive({"num_attention_heads", "n_head", "n_heads", "num_heads"},
                                       "for the number of query heads");

  for (const ConfigFields* src : {&f, &top}) {
    if (spec.max_position_embeddings > 0) break;
    if (const json* v = src->find_any({"max_position_embeddings", "n_positions", "max_seq_len",
                                       "seq_length", "max_sequence_length", "model_max_length"})) {
      if (!v->is_number_integer() || v->get<int64_t>() <= 0)
        src->fail_type("max_position_embeddings", *v, "a positive integer (the context length)");
      spec.max_position_embeddings = v->get<int64_t>();
    }
  }
  // Zamba2Config sets 16384 positions over whatever the file says when use_long_context is on.
  if (text_type == "zamba2" && f.get_bool("use_long_context") == true)
    spec.max_position_embeddings = 16384;

  // ---- MLA (DeepSeek-V2/V3, Kimi-K2, GLM MLA models) ----
  // Their model types default kv_lora_rank (architecture_defaults); only an explicit null (or
  // another architecture without it) means no MLA. MiniCPM3 has the latent projections but vLLM
  // expands them into per-head K and V (below): no latent cache.
  const bool expanded_latent = text_type == "minicpm3";
  std::optional<MlaDims> mla;
  if (f.has("kv_lora_rank") && !expanded_latent) {
    MlaDims m;
    m.kv_lora_rank = f.require_positive("kv_lora_rank", "for MLA");
    m.qk_nope_head_dim = f.require_positive("qk_nope_head_dim", "for MLA (kv_lora_rank is set)");
    m.qk_rope_head_dim = f.require_positive("qk_rope_head_dim", "for MLA (kv_lora_rank is set)");
    m.v_head_dim = f.require_positive("v_head_dim", "for MLA (kv_lora_rank is set)");
    m.q_lora_rank = f.get_positive("q_lora_rank").value_or(0);  // null: full-rank queries
    // DeepSeek-V3.2 sparse attention: the lightning indexer picks index_topk tokens.
    m.sparse = f.has("index_topk");
    mla = m;
  }

  // ---- heads ----
  int kv_heads = heads;
  int head_size = 0;
  if (mla) {
    // The latent cache holds one shared "head" of kv_lora_rank + rope per token; the config's
    // num_key_value_heads is nominal.
    kv_heads = 1;
    head_size = mla->decode_head_size();
  } else if (expanded_latent) {
    // vLLM's MiniCPM3Attention: K = (nope, rope) per head, V padded with zeros to that width, one
    // KV head per query head, through plain attention (scale 1/sqrt(nope + rope)).
    head_size = f.require_positive("qk_nope_head_dim", "for MiniCPM3's head size") +
                f.require_positive("qk_rope_head_dim", "for MiniCPM3's head size");
  } else if (text_type == "zamba2") {
    // The shared attention block reads the mamba stream concatenated with the embeddings: 2 x
    // hidden_size wide, split over all heads (Zamba2Config's attention_head_dim, derived whatever
    // the file says), and vLLM builds it with as many KV heads as query heads.
    const int width = 2 * f.require_positive("hidden_size", "for Zamba2's attention width");
    if (width % heads != 0)
      f.fail(
          fmt::format("2 x field '{}' ({}) is not divisible by '{}' ({}): Zamba2's attention "
                      "head size is 2 x hidden_size / heads",
                      f.name("hidden_size"), width, f.name(heads_key), heads));
    head_size = width / heads;
  } else {
    // vLLM ModelConfig.get_total_num_kv_heads: Falcon without the new decoder architecture and
    // multi_query is MQA; MPT keeps the count in attn_config; absent everywhere means MHA.
    const bool falcon = spec.model_type == "falcon" || spec.model_type == "RefinedWeb" ||
                        spec.model_type == "RefinedWebModel";
    const bool new_falcon = falcon && f.get_bool("new_decoder_architecture") == true;
    if (!new_falcon && f.get_bool("multi_query") == true) {
      kv_heads = 1;
    } else if (f.find_any(
                   {"num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"})) {
      kv_heads = f.require_positive(
          {"num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"},
          "for the number of KV heads");
    } else if (attn_config && attn_config->has("kv_n_heads")) {
      kv_heads = attn_config->require_positive("kv_n_heads", "for the number of KV heads");
    }
    if (heads % kv_heads != 0) {
      f.fail(
          fmt::format("field '{}' ({}) is not a multiple of the KV head count ({}); expected "
                      "grouped-query attention with whole groups",
                      f.name(heads_key), heads, kv_heads));
    }
    head_size = f.has("head_dim") ? f.require_positive("head_dim", "for the head size")
                                  : head_size_from_hidden(f, heads, heads_key);
  }

  // ---- per-layer kinds ----
  const bool encoder_only = b.encoder_only;
  std::vector<LayerKind> kinds;
  if (const json* lt = f.find("layer_types")) {
    kinds = kinds_from_layer_types(f, *lt, num_layers);
  } else if (const json* hp = f.find("hybrid_override_pattern")) {
    if (!hp->is_string()) f.fail_type("hybrid_override_pattern", *hp, "a string");
    kinds = kinds_from_pattern(f, hp->get<std::string>(), num_layers);
  } else if (const json* bt = f.find("layers_block_type")) {
    // An explicit per-layer list (vLLM counts hybrid layers by it): attention, mamba, or a
    // feed-forward-only block; Zamba2's "hybrid" blocks run its shared attention block before a
    // Mamba2 mixer (placed below).
    if (!bt->is_array() || int(bt->size()) != num_layers)
      f.fail(fmt::format("field '{}' must name one block type for each of the {} layers",
                         f.name("layers_block_type"), num_layers));
    for (size_t i = 0; i < bt->size(); ++i) {
      const json& v = (*bt)[i];
      if (text_type == "zamba2" && v != "mamba" && v != "hybrid") {
        // vLLM's Zamba2 builds a Mamba2 layer for any other entry; refused rather than guessed.
        f.fail(fmt::format("field '{}[{}]' is {}; expected mamba or hybrid",
                           f.name("layers_block_type"), i, v.dump()));
      } else if (v == "attention") {
        kinds.push_back(LayerKind::kFull);
      } else if (v == "mamba") {
        kinds.push_back(LayerKind::kMamba);
      } else if (v == "moe" || v == "mlp") {
        kinds.push_back(LayerKind::kNone);
      } else if (v == "hybrid" && text_type == "zamba2") {
        kinds.push_back(LayerKind::kFull);
      } else {
        f.fail(
            fmt::format("field '{}[{}]' is {}; expected attention, mamba, moe or mlp (hybrid "
                        "blocks belong to model_type zamba2)",
                        f.name("layers_block_type"), i, v.dump()));
      }
    }
  } else if (const json* ai = f.find("attn_layer_indices"); ai && text_type == "bamba") {
    // transformers' BambaConfig.layers_block_type: attention at these indices, Mamba2 elsewhere.
    kinds =
        kinds_from_attention_indices(f, "attn_layer_indices", *ai, num_layers, LayerKind::kMamba);
  } else if (const json* fi = f.find("full_attn_idxs"); fi && text_type == "lfm2") {
    // LFM2 configs before layer_types: attention at these indices, short convolutions elsewhere.
    kinds =
        kinds_from_attention_indices(f, "full_attn_idxs", *fi, num_layers, LayerKind::kShortConv);
  } else if (const json* lac = f.find("linear_attn_config"); lac && text_type == "kimi_linear") {
    // Kimi-Linear (vLLM's KimiLinearConfig.is_kda_layer): the 1-based kda_layers run Kimi Delta
    // Attention, every other layer MLA.
    if (!lac->is_object()) f.fail_type("linear_attn_config", *lac, "an object");
    const ConfigFields lin(*lac, f.source(), f.name("linear_attn_config."));
    const json* kda = lin.find("kda_layers");
    if (!kda || !kda->is_array())
      lin.fail("field '" + lin.name("kda_layers") + "' must list the KDA layers (1-based)");
    kinds.assign(num_layers, LayerKind::kFull);
    for (size_t k = 0; k < kda->size(); ++k) {
      const json& v = (*kda)[k];
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > num_layers ||
          kinds[v.get<int64_t>() - 1] == LayerKind::kLinear)
        lin.fail(
            fmt::format("field '{}[{}]' is {}; expected a 1-based layer number in 1 .. {}, "
                        "each once",
                        lin.name("kda_layers"), k, v.dump(), num_layers));
      kinds[v.get<int64_t>() - 1] = LayerKind::kLinear;
    }
  } else if (const json* at = f.find("attn_type_list")) {
    // MiniMax-Text-01 / M1 (vLLM counts its attention layers the same way): 1 softmax attention,
    // 0 lightning linear attention.
    if (!at->is_array() || int(at->size()) != num_layers)
      f.fail(
          fmt::format("field '{}' must list 0 (linear) or 1 (softmax attention) for each of "
                      "the {} layers",
                      f.name("attn_type_list"), num_layers));
    for (size_t i = 0; i < at->size(); ++i) {
      const json& v = (*at)[i];
      if (v != 0 && v != 1)
        f.fail(fmt::format("field '{}[{}]' is {}; expected 0 (linear) or 1 (softmax attention)",
                           f.name("attn_type_list"), i, v.dump()));
      kinds.push_back(v == 1 ? LayerKind::kFull : LayerKind::kLightning);
    }
  } else if (auto interval = f.get_positive("full_attention_interval")) {
    // Qwen3-Next before layer_types: every interval-th layer is full attention, the rest Gated
    // DeltaNet.
    for (int i = 0; i < num_layers; ++i) {
      kinds.push_back((i + 1) % *interval == 0 ? LayerKind::kFull : LayerKind::kLinear);
    }
  }
  std::optional<int> window = encoder_only
                                  ? std::nullopt
                                  : effective_window(f, attn_config ? &*attn_config : nullptr,
                                                     spec.max_position_embeddings);
  if (text_type == "modernbert") {
    // Local layers see the keys within local_attention / 2 on either side (transformers:
    // |q - k| <= local_attention // 2), so an encoder window of w = that + 1 (semantics §3: w - 1
    // keys each side); every global_attn_every_n_layers-th layer from layer 0 sees all keys.
    const int local = f.require_positive("local_attention", "for ModernBERT's local layers");
    const int every =
        f.require_positive("global_attn_every_n_layers", "for ModernBERT's global layers");
    window = local / 2 + 1;
    if (kinds.empty())
      for (int i = 0; i < num_layers; ++i)
        kinds.push_back(i % every == 0 ? LayerKind::kFull : LayerKind::kSliding);
  }
  if (kinds.empty() && text_type == "jamba") {
    // transformers' JambaConfig.layers_block_type: attention where i % period == offset, Mamba
    // (Mamba-1) layers elsewhere.
    const int period =
        f.require_positive("attn_layer_period", "for Jamba's attention layer placement");
    const int64_t offset = f.get_int("attn_layer_offset").value_or(-1);
    if (offset < 0 || offset >= period)
      f.fail(
          fmt::format("field '{}' must be in 0 .. {} ('{}' - 1) for Jamba's attention layer "
                      "placement",
                      f.name("attn_layer_offset"), period - 1, f.name("attn_layer_period")));
    for (int i = 0; i < num_layers; ++i)
      kinds.push_back(i % period == offset ? LayerKind::kFull : LayerKind::kMamba);
  }
  if (kinds.empty() && (text_type == "llama4_text" || text_type == "llama4"))
    kinds = llama4_kinds(f, num_layers);
  if (kinds.empty()) {
    kinds = window ? implied_sliding(f, text_type, num_layers)
                   : std::vector<LayerKind>(num_layers, LayerKind::kFull);
  }
  // Chunked layers with a null chunk size attend fully, as vLLM reads them (Llama 4); without
  // the key there is no chunk to read, which is an error.
  const std::optional<int> chunk = f.get_positive("attention_chunk_size");
  if (auto it = std::find(kinds.begin(), kinds.end(), LayerKind::kChunked);
      it != kinds.end() && !chunk && !(text ? *text : root).contains("attention_chunk_size"))
    f.fail(
        fmt::format("field '{}[{}]' is chunked_attention, but '{}' is not given: the chunk "
                    "size is unknown",
                    f.name("layer_types"), it - kinds.begin(), f.name("attention_chunk_size")));
  if (chunk && std::find(kinds.begin(), kinds.end(), LayerKind::kChunked) == kinds.end()) {
    std::string note = fmt::format(
        "{}: {} {} is given but no layer is chunked (layer_types has no chunked_attention): "
        "every layer attends fully",
        f.source(), f.name("attention_chunk_size"), *chunk);
    log(LogLevel::kWarning, note);
    spec.notes.push_back(std::move(note));
  }

  // ---- per-layer features ----
  double soft_cap = 0.0;
  if (auto c = f.get_number("attn_logit_softcapping")) {
    if (*c < 0) {
      f.fail(fmt::format("field '{}' must be >= 0 (0 = off), got {}",
                         f.name("attn_logit_softcapping"), *c));
    }
    soft_cap = *c;  // final_logit_softcapping caps the LM head, not attention
  }
  const std::optional<double> scale =
      model_softmax_scale(f, attn_config ? &*attn_config : nullptr, text_type, mla, head_size);
  // gpt-oss's sinks are learned per-head weights; no config key names them.
  const bool sinks = spec.model_type == "gpt_oss" || text_type == "gpt_oss";
  const bool alibi = f.get_bool("alibi") == true ||
                     (attn_config && attn_config->get_bool("alibi") == true) ||
                     text_type == "bloom" || f.get_string("position_embedding_type") == "alibi" ||
                     baichuan_alibi(root, f, text_type);
  const bool mm_prefix =
      is_mm_prefix_type(spec.model_type) || top.get_bool("is_mm_prefix_lm") == true;
  // Gemma 4 (26B-A4B, 31B): use_bidirectional_attention "vision" makes each image's soft tokens
  // attend to each other on the sliding layers only (transformers' create_causal_mask_mapping puts
  // the image mask on the sliding layers' mask); the full layers stay causal.
  const bool sliding_mm_prefix = [&] {
    const json* bidi = f.find("use_bidirectional_attention");
    if (encoder_only || !bidi || !bidi->is_string()) return false;
    if (bidi->get<std::string>() == "vision") return true;
    std::string note = fmt::format(
        "{}: field '{}' is '{}', a value attnkit does not know (\"vision\": images attend both "
        "ways on the sliding layers; a boolean: encoder-only); the layers were read as causal",
        top.source(), f.name("use_bidirectional_attention"), bidi->get<std::string>());
    log(LogLevel::kWarning, note);
    spec.notes.push_back(std::move(note));
    return false;
  }();
  if ((mm_prefix || sliding_mm_prefix) && !encoder_only) {
    if (auto n = image_tokens(root, top, f)) {
      spec.mm_item_tokens = *n;
    } else {  // both families use 256
      spec.mm_item_tokens = 256;
      std::string note = fmt::format(
          "{}: a PrefixLM model without mm_tokens_per_image, num_image_tokens or "
          "vision_soft_tokens_per_image; taken as 256 image tokens",
          top.source());
      log(LogLevel::kWarning, note);
      spec.notes.push_back(std::move(note));
    }
  }
  // Gemma-4 full layers: wider heads and fewer KV heads. (attention_k_eq_v: those layers derive
  // V from the K projection, but the cache still stores K and V separately, so nothing changes
  // here.)
  const std::optional<int> global_head = f.get_positive("global_head_dim");
  const std::optional<int> global_kv = f.get_positive("num_global_key_value_heads");

  // Gemma-3n style KV sharing: the last num_kv_shared_layers layers reuse the cache of the last
  // earlier layer of the same kind.
  // Checked as read (int64): a cast first made 4294967297 share one layer.
  const int64_t shared64 = f.get_int("num_kv_shared_layers").value_or(0);
  if (shared64 < 0 || (shared64 > 0 && shared64 >= num_layers)) {
    f.fail(fmt::format("field '{}' is {}; expected 0 .. {}", f.name("num_kv_shared_layers"),
                       shared64, num_layers - 1));
  }
  const int shared = int(shared64);
  const int first_shared = num_layers - shared;

  const AttentionType type = encoder_only ? AttentionType::kEncoderOnly : AttentionType::kDecoder;
  // A mamba, linear-attention or short-convolution layer's recurrent state, sized as vLLM sizes
  // it.
  auto state_layer = [&](int index, LayerKind kind) {
    StateLayerSpec s;
    s.layer_index = index;
    s.dtype = b.dtype;
    // vLLM MambaStateDtypeCalculator: the conv state uses the model dtype; the temporal (SSM)
    // state uses mamba_ssm_cache_dtype, whose "auto" means the conv dtype. NemotronH's config
    // hook reads the key from config.json and defaults it to float32.
    DType ssm = b.dtype;
    if (auto v = f.get_string("mamba_ssm_cache_dtype"); v && *v != "auto") {
      ssm = *read_dtype(f, "mamba_ssm_cache_dtype");
    } else if (!v && text_type == "nemotron_h") {
      ssm = DType::kFloat32;
    }
    const char* why = kind == LayerKind::kMamba       ? "for the mamba state size"
                      : kind == LayerKind::kShortConv ? "for the short-convolution state size"
                                                      : "for the linear-attention state size";
    if (kind == LayerKind::kShortConv) {
      // LFM2 (vLLM short_conv_state_shape): (conv_L_cache - 1) x hidden_size in the model dtype.
      s.kind = StateKind::kShortConv;
      s.state_bytes_per_request = int64_t(f.require_positive("conv_L_cache", why) - 1) *
                                  f.require_positive("hidden_size", why) * dtype_bytes(b.dtype);
    } else if (kind == LayerKind::kMamba && text_type == "jamba") {
      s.kind = StateKind::kMamba;
      model_detail::Mamba1Dims d;
      d.intermediate =
          int64_t(f.require_positive("mamba_expand", why)) * f.require_positive("hidden_size", why);
      d.state_size = f.require_positive("mamba_d_state", why);
      d.conv_kernel = f.require_positive("mamba_d_conv", why);
      s.state_bytes_per_request = model_detail::mamba1_state_bytes(d, b.dtype, ssm);
    } else if (kind == LayerKind::kMamba) {
      s.kind = StateKind::kMamba;
      model_detail::Mamba2Dims d;
      d.num_heads = f.require_positive({"mamba_num_heads", "mamba_n_heads", "n_mamba_heads"}, why);
      // Bamba's, Falcon-H1's and Zamba2's conv channels are mamba_expand * hidden_size (vLLM's
      // intermediate_size; Falcon-H1's mamba_d_ssm where set). Bamba's mamba_d_head "auto" means
      // those channels per head (transformers' BambaConfig), and so does Zamba2's head size
      // always (Zamba2Config derives mamba_headdim).
      const std::optional<int> d_ssm = f.get_positive("mamba_d_ssm");
      if (text_type == "falcon_h1" && d_ssm)
        d.intermediate = *d_ssm;
      else if (text_type == "bamba" || text_type == "falcon_h1" || text_type == "zamba2")
        d.intermediate = int64_t(f.require_positive("mamba_expand", why)) *
                         f.require_positive("hidden_size", why);
      const json* d_head = f.find("mamba_d_head");
      if (d.intermediate && (text_type == "zamba2" || (d_head && *d_head == "auto"))) {
        if (d.intermediate % d.num_heads != 0)
          f.fail(
              fmt::format("the mamba channels ({}) are not divisible by the {} mamba heads: "
                          "their head size is channels / heads",
                          d.intermediate, d.num_heads));
        d.head_dim = int(d.intermediate / d.num_heads);
      } else {
        d.head_dim = f.require_positive({"mamba_head_dim", "mamba_d_head"}, why);
      }
      d.n_groups = f.require_positive({"n_groups", "mamba_n_groups", "mamba_ngroups"}, why);
      d.state_size = f.require_positive({"ssm_state_size", "mamba_d_state"}, why);
      d.conv_kernel = f.require_positive({"conv_kernel", "mamba_d_conv"}, why);
      s.state_bytes_per_request = model_detail::mamba2_state_bytes(d, b.dtype, ssm);
    } else if (kind == LayerKind::kLinear && text_type == "kimi_linear") {
      // vLLM kda_state_shape / kda_state_dtype: q, k and v short-convolution states of
      // (kernel - 1) x heads x head_dim in the model dtype, and a heads x head_dim x head_dim
      // recurrent state in float32 (the gated-delta-net layout with as many K as V heads).
      s.kind = StateKind::kLinearAttention;
      const ConfigFields lin(*f.find("linear_attn_config"), f.source(),
                             f.name("linear_attn_config."));
      model_detail::GatedDeltaNetDims d;
      d.num_k_heads = d.num_v_heads = lin.require_positive("num_heads", why);
      d.head_k_dim = d.head_v_dim = lin.require_positive("head_dim", why);
      d.conv_kernel = lin.require_positive("short_conv_kernel_size", why);
      s.state_bytes_per_request =
          model_detail::gated_delta_net_state_bytes(d, b.dtype, DType::kFloat32);
    } else if (kind == LayerKind::kLightning) {
      // vLLM linear_attention_state_shape: num_heads x head_dim x head_dim, model dtype.
      s.kind = StateKind::kLinearAttention;
      s.state_bytes_per_request = int64_t(heads) * head_size * head_size * dtype_bytes(b.dtype);
    } else {
      s.kind = StateKind::kLinearAttention;
      model_detail::GatedDeltaNetDims d;
      d.num_k_heads = f.require_positive("linear_num_key_heads", why);
      d.num_v_heads = f.require_positive("linear_num_value_heads", why);
      d.head_k_dim = f.require_positive("linear_key_head_dim", why);
      d.head_v_dim = f.require_positive("linear_value_head_dim", why);
      d.conv_kernel = f.require_positive("linear_conv_kernel_dim", why);
      s.state_bytes_per_request = model_detail::gated_delta_net_state_bytes(d, b.dtype, ssm);
    }
    spec.state_layers.push_back(s);
  };
  // Zamba2 (vLLM zamba2.py): every layer has a Mamba2 mixer, numbered hybrid count + i; hybrid
  // layer k (of `hybrids`) also runs shared block k % num_mem_blocks, whose attention for it is
  // vLLM's layer `attn.j`: each block numbers its layers from block * (hybrids + blocks - 1) /
  // blocks on.
  const bool zamba2 = text_type == "zamba2";
  const int hybrids = zamba2 ? int(std::count(kinds.begin(), kinds.end(), LayerKind::kFull)) : 0;
  const int mem_blocks =
      zamba2 ? f.require_positive("num_mem_blocks", "for Zamba2's shared attention blocks") : 1;
  int hybrid_rank = 0;
  auto attention_index = [&](int i) {
    if (!zamba2) return i;
    const int k = hybrid_rank++;
    const int j =
        int(int64_t(k % mem_blocks) * (hybrids + mem_blocks - 1) / mem_blocks) + k / mem_blocks;
    if (j >= hybrids)  // vLLM's formula leaves gaps for some counts: j would name a mixer
      f.fail(
          fmt::format("'{}' {} over {} hybrid layers numbers an attention layer {} in vLLM, "
                      "the index of a Mamba2 mixer: not modelled",
                      f.name("num_mem_blocks"), mem_blocks, hybrids, j));
    return j;
  };
  for (int i = 0; i < num_layers; ++i) {
    const LayerKind kind = kinds[i];
    if (kind == LayerKind::kNone) continue;
    if (kind == LayerKind::kMamba || kind == LayerKind::kLinear || kind == LayerKind::kLightning ||
        kind == LayerKind::kShortConv) {
      if (!zamba2) state_layer(i, kind);
      continue;
    }
    LayerSpec l = b.base(attention_index(i), type);
    l.num_heads = heads;
    l.num_kv_heads = kv_heads;
    l.head_size = head_size;
    l.head_size_v = mla ? mla->kv_lora_rank : head_size;
    l.mla = mla;
    if (kind == LayerKind::kFull && !mla) {
      if (global_head) l.head_size = l.head_size_v = *global_head;
      if (global_kv) l.num_kv_heads = *global_kv;
      if (heads % l.num_kv_heads != 0) {
        f.fail(fmt::format("field '{}' ({}) is not a multiple of '{}' ({})", f.name(heads_key),
                           heads, f.name("num_global_key_value_heads"), l.num_kv_heads));
      }
    }
    // A layer typed sliding in a config without an (effective) window attends fully.
    if (kind == LayerKind::kSliding && window) l.sliding_window = window;
    if (kind == LayerKind::kChunked && chunk) l.attention_chunk_size = chunk;
    l.logits_soft_cap = soft_cap;
    if (scale && *scale != l.default_scale()) l.softmax_scale = scale;
    l.sinks = sinks;
    l.alibi = alibi;
    l.mm_prefix =
        (mm_prefix || (sliding_mm_prefix && kind == LayerKind::kSliding)) && !encoder_only;
    if (shared > 0 && i >= first_shared) {
      for (int j = first_shared - 1; j >= 0; --j) {
        if (kinds[j] == kind) {
          l.kv_sharing_target_layer = j;
          break;
        }
      }
      if (!l.kv_sharing_target_layer) {
        f.fail(
            fmt::format("field '{}' ({}) makes layer {} share a KV cache, but no earlier "
                        "layer has the same attention kind",
                        f.name("num_kv_shared_layers"), shared, i));
      }
    }
    spec.attention_layers.push_back(std::move(l));
  }
  // Falcon-H1 runs a Mamba2 mixer beside the attention of every layer; vLLM numbers layer i's
  // mixer num_layers + i (its modules need distinct indices), and so does this reader.
  if (text_type == "falcon_h1")
    for (int i = 0; i < num_layers; ++i) state_layer(num_layers + i, LayerKind::kMamba);
  if (zamba2)
    for (int i = 0; i < num_layers; ++i) state_layer(hybrids + i, LayerKind::kMamba);
  spec.num_layers = num_layers;
}

std::string name_from_source(std::string_view source) {
  namespace fs = std::filesystem;
  const fs::path p{std::string(source)};
  // A Hugging Face snapshot folder: name the model after the folder, not "config".
  if (p.filename() == "config.json" && p.has_parent_path() && !p.parent_path().filename().empty()) {
    return p.parent_path().filename().string();
  }
  return p.stem().string();
}

// Sets the layers `skip` names back to the model dtype's cache (ModelLoadOptions); a layer that
// reads another's cache keeps its target's format.
void apply_kv_skip_layers(ModelSpec& spec, const ModelLoadOptions& options) {
  const KvSkipLayers& skip = options.kv_cache_dtype_skip_layers;
  if (skip.empty()) return;
  if (std::all_of(spec.attention_layers.begin(), spec.attention_layers.end(),
                  [](const LayerSpec& l) { return l.kv_cache_dtype == KvCacheDType::kAuto; }))
    throw InvalidArgument(
        "kv_cache_dtype_skip_layers keeps the layers it names at the model dtype's cache (auto), "
        "so it needs another kv_cache_dtype for the rest (fp8, fp8_e5m2, nvfp4, ...) or a "
        "checkpoint with a quantized KV cache; got auto");
  std::vector<int> indices;
  for (const auto& l : spec.attention_layers) indices.push_back(l.layer_index);
  for (int i : skip.layers)
    if (std::find(indices.begin(), indices.end(), i) == indices.end())
      throw InvalidArgument(fmt::format(
          "kv_cache_dtype_skip_layers: layer {} is not an attention layer of {} (its attention "
          "layers: {}{})",
          i, spec.name,
          fmt::join(indices.begin(), indices.begin() + std::min<ptrdiff_t>(8, indices.size()),
                    ", "),
          indices.size() > 8 ? fmt::format(", ... {}", indices.back()) : ""));
  bool any_sliding = false;
  for (auto& l : spec.attention_layers) {
    any_sliding |= l.sliding_window.has_value();
    const bool listed =
        std::find(skip.layers.begin(), skip.layers.end(), l.layer_index) != skip.layers.end();
    if (!listed && !(skip.sliding_window && l.sliding_window)) continue;
    l.kv_cache_dtype = KvCacheDType::kAuto;
    l.kv_scale_granularity = kv_format_info(KvCacheDType::kAuto).default_scale_granularity;
  }
  for (auto& l : spec.attention_layers) {
    if (!l.kv_sharing_target_layer) continue;
    for (const auto& t : spec.attention_layers)
      if (t.layer_index == *l.kv_sharing_target_layer) {
        l.kv_cache_dtype = t.kv_cache_dtype;
        l.kv_scale_granularity = t.kv_scale_granularity;
      }
  }
  if (skip.sliding_window && !any_sliding) {
    std::string note = fmt::format(
        "{}: kv_cache_dtype_skip_layers names sliding_window, but the model has no sliding-window "
        "layer",
        spec.source);
    log(LogLevel::kWarning, note);
    spec.notes.push_back(std::move(note));
  }
}

}  // namespace

KvSkipLayers parse_kv_skip_layers(std::string_view text) {
  KvSkipLayers skip;
  for (std::string_view piece : split(text)) {
    const std::string_view token = trim(piece);
    if (token.empty()) continue;
    if (token == "sliding_window") {
      skip.sliding_window = true;
      continue;
    }
    int v = -1;
    const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec != std::errc() || p != token.data() + token.size() || v < 0)
      throw InvalidArgument(fmt::format(
          "kv_cache_dtype_skip_layers: '{}' is neither a layer index (an integer >= 0) nor "
          "sliding_window",
          token));
    skip.layers.push_back(v);
  }
  return skip;
}

ModelSpec parse_model_config(std::string_view json_text, std::string_view source,
                             const ModelLoadOptions& options) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    // e.what() carries nlohmann's position: "parse error at line L, column C: ...".
    throw InvalidArgument(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  if (!root.is_object()) {
    throw InvalidArgument(
        fmt::format("{}: the top level must be a JSON object, got {}", source, root.type_name()));
  }
  const ConfigFields top(root, std::string(source), "");
  if (options.block_size && *options.block_size <= 0) {
    throw InvalidArgument(
        fmt::format("block_size must be a positive number of tokens, got {}", *options.block_size));
  }

  ModelSpec spec;
  spec.source = std::string(source);
  spec.name = name_from_source(source);
  spec.model_type = top.require_string("model_type", "to know the model architecture");

  // The config's dtype, where vLLM's _find_dtype looks for it: the top level's, else the text,
  // vision or encoder sub-config's (a multimodal config's text_config may keep transformers'
  // float32 default under a float16 top level). The model runs in what the stack's rule makes of
  // it on the device; without a rule, in the override, else in it, else in bf16.
  const TextConfig text = find_text_config(root, top, spec.model_type);
  spec.config_dtype = read_any_dtype(top);
  if (!spec.config_dtype && text.value)
    spec.config_dtype = read_any_dtype(ConfigFields(*text.value, top.source(), text.name + "."));
  for (const char* sub : {"vision_config", "encoder_config"}) {
    if (spec.config_dtype) break;
    if (auto it = root.find(sub); it != root.end() && it->is_object())
      spec.config_dtype = read_any_dtype(ConfigFields(*it, top.source(), std::string(sub) + "."));
  }
  const std::string encoder_only = encoder_only_reason(root, text);
  std::tie(spec.pooling, spec.runner_reason) = resolve_runner(top, options.runner, encoder_only);
  if (options.dtype_rule) {
    ModelDtype d = options.dtype_rule(
        ModelDtypeQuery{spec.model_type, spec.config_dtype, spec.pooling, options.dtype});
    spec.dtype = d.dtype;
    if (!d.note.empty()) {
      d.note = fmt::format("{}: {}", source, d.note);
      log(LogLevel::kWarning, d.note);
      spec.notes.push_back(std::move(d.note));
    }
  } else {
    spec.dtype = options.dtype.value_or(spec.config_dtype.value_or(DType::kBFloat16));
  }
  // The cache format: the user's choice wins; else the checkpoint's (quantization_config), else
  // the model dtype's. A user's fp8 over a checkpoint calibrated per head keeps per-head scales.
  // vLLM also looks in a multimodal config's text_config (llm_config, after its remap) when the
  // top level has none; not in a thinker's.
  std::optional<CheckpointKv> ckpt = checkpoint_kv_cache(top);
  if (!top.find("quantization_config") && text.top_level_key)
    ckpt = checkpoint_kv_cache(ConfigFields(*text.value, top.source(), text.name + "."));
  CheckpointKv kv = ckpt.value_or(CheckpointKv{});
  if (ckpt && !options.kv_cache_dtype) {
    std::string note = fmt::format(
        "{}: quantization_config calibrates the KV cache for {}{}: the cache takes that format "
        "(--kv-cache-dtype overrides it)",
        source, to_string(ckpt->dtype),
        ckpt->granularity == ScaleGranularity::kPerHead ? " with per-head scales" : "");
    log(LogLevel::kWarning, note);
    spec.notes.push_back(std::move(note));
  }
  if (options.kv_cache_dtype) {
    kv.dtype = *options.kv_cache_dtype;
    const ScaleGranularity def = kv_format_info(kv.dtype).default_scale_granularity;
    kv.granularity = ckpt && ckpt->granularity == ScaleGranularity::kPerHead &&
                             def == ScaleGranularity::kPerTensor
                         ? ScaleGranularity::kPerHead
                         : def;
  }
  const Builder b{options, spec.dtype, kv, !encoder_only.empty()};

  const bool t5 = is_t5_type(spec.model_type);
  if (t5 || is_bart_type(spec.model_type)) {
    build_encoder_decoder(top, t5, b, spec);
  } else if (top.get_bool("is_encoder_decoder") == true) {
    top.fail(
        fmt::format("model_type '{}' is an encoder-decoder model attnkit cannot read; "
                    "expected a T5-style (t5, mt5, umt5) or BART-style (bart, mbart, "
                    "marian, pegasus, whisper, ...) config",
                    spec.model_type));
  } else {
    build_standard(root, text, top, b, spec);
  }
  std::stable_sort(
      spec.attention_layers.begin(), spec.attention_layers.end(),
      [](const LayerSpec& a, const LayerSpec& c) { return a.layer_index < c.layer_index; });
  apply_kv_skip_layers(spec, options);
  return spec;
}

}  // namespace attnkit
