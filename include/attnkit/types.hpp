// Core value types of attnkit: dtypes, KV storage formats, attention types, the per-layer spec.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnkit {

// Activation (model) dtypes.
enum class DType { kFloat32, kFloat16, kBFloat16 };

// KV cache storage formats. Each is explicit: nothing is ever inferred from a uint8 buffer.
enum class KvCacheDType { kAuto, kFloat16, kBFloat16, kFp8E4M3, kFp8E5M2, kNvfp4 };

// How a quantized cache's scales are laid out.
enum class ScaleGranularity {
  kNone,       // unquantized storage
  kPerTensor,  // one fp32 scale for K and one for V per layer
  kPerHead,    // one fp32 scale per KV head for K and for V
  kPerBlock16  // nvfp4: one e4m3 scale per 16 consecutive elements of a head, plus a per-tensor
               // fp32
};

// What element type a kernel reads from the storage.
enum class KvKernelView { kFloat16, kBFloat16, kFloat32, kFp8E4M3, kFp8E5M2, kE2M1Packed };

struct KvFormatInfo {
  std::string_view name;
  // Storage bits per element (4 for nvfp4: two values per byte).
  int bits_per_element;
  bool needs_scales;
  ScaleGranularity default_scale_granularity;
  KvKernelView kernel_view;
};

enum class AttentionType {
  kDecoder,      // causal self-attention with a KV cache
  kEncoder,      // self-attention of the encoder of an encoder-decoder model (non-causal)
  kEncoderOnly,  // bidirectional self-attention of encoder-only models (no persistent cache)
  kCross         // decoder queries against the encoder's K/V
};

enum class Platform { kCuda, kRocm, kCpu, kXpu };

std::string_view to_string(DType d);
std::string_view to_string(KvCacheDType d);
std::string_view to_string(ScaleGranularity g);
std::string_view to_string(AttentionType t);
std::string_view to_string(Platform p);

// Parsers accept the canonical names and common aliases, case-insensitively, and throw
// InvalidArgument naming the accepted values otherwise.
DType parse_dtype(std::string_view s);  // float32|fp32, float16|fp16|half, bfloat16|bf16
KvCacheDType parse_kv_cache_dtype(std::string_view s);  // auto, float16, bfloat16, fp8(_e4m3), ...
AttentionType parse_attention_type(std::string_view s);

int dtype_bytes(DType d);
const KvFormatInfo& kv_format_info(KvCacheDType d);
// `auto` resolves to the model dtype's storage (fp32 models store fp32 only through `auto`).
KvCacheDType resolve_kv_dtype(KvCacheDType kv, DType model);
// Bytes of storage for one head vector of `head_size` elements (nvfp4: packed nibbles only).
int64_t kv_bytes_per_head_vector(KvCacheDType resolved, DType model, int head_size);
// Bytes of per-element-block scales stored beside one head vector (nvfp4: head_size / 16).
int64_t kv_block_scale_bytes_per_head_vector(KvCacheDType resolved, int head_size);

struct MlaDims {
  int kv_lora_rank = 0;      // latent width (512 for DeepSeek-V3)
  int qk_nope_head_dim = 0;  // 128
  int qk_rope_head_dim = 0;  // 64
  int v_head_dim = 0;        // 128
  int q_lora_rank = 0;       // 0 when queries are not low-rank
  bool sparse = false;       // DeepSeek sparse attention (indexer-selected tokens)

  // Decode works over the latent cache: QK size kv_lora_rank + rope, V size kv_lora_rank.
  int decode_head_size() const { return kv_lora_rank + qk_rope_head_dim; }
  int prefill_qk_head_size() const { return qk_nope_head_dim + qk_rope_head_dim; }
  bool operator==(const MlaDims&) const = default;
};

// Everything the selector and the kernels need to know about one attention layer.
struct LayerSpec {
  int layer_index = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_size = 0;    // Q/K head size (MLA: decode head size, kv_lora_rank + rope)
  int head_size_v = 0;  // V/output head size (MLA: kv_lora_rank)
  DType dtype = DType::kBFloat16;
  KvCacheDType kv_cache_dtype = KvCacheDType::kAuto;
  ScaleGranularity kv_scale_granularity = ScaleGranularity::kNone;  // resolved from the KV dtype
  AttentionType attn_type = AttentionType::kDecoder;
  // Hugging Face meaning: tokens visible including the current one. Kernels get window_left = w-1.
  std::optional<int> sliding_window;
  // Chunked local attention (Llama 4's attention_chunk_size): keys of the query's own chunk only.
  std::optional<int> attention_chunk_size;
  bool alibi = false;
  bool sinks = false;
  double logits_soft_cap = 0.0;  // 0 = off
  // The model's softmax scale where its attention code does not use 1/sqrt(QK head size), the
  // prefill QK size for MLA (Gemma 2/3's query_pre_attn_scalar, DeepSeek's YaRN mscale, Gemma
  // 3n/4's and T5's 1.0, Granite's attention_multiplier); scale() resolves the default.
  std::optional<double> softmax_scale;
  std::optional<MlaDims> mla;
  std::optional<int> kv_sharing_target_layer;
  std::optional<int> block_size;  // pinned by the user (--block-size)
  bool mm_prefix = false;         // PrefixLM bidirectional multimodal prefix

  bool is_mla() const { return mla.has_value(); }
  bool is_sparse() const { return mla && mla->sparse; }
  // Decoder and cross attention take the paged cache with seqused_k metadata; encoder_only
  // layers are non-causal over their own contiguous K/V.
  bool causal() const { return attn_type == AttentionType::kDecoder; }
  // The kernels' window for sliding_window w (docs/semantics.md §3): w - 1 keys to the left, and to
  // the right w - 1 for encoder self-attention (a symmetric local window), 0 otherwise; -1 (no
  // bound) without a window.
  int window_left() const { return sliding_window ? *sliding_window - 1 : -1; }
  int window_right() const {
    if (!sliding_window) return -1;
    const bool encoder =
        attn_type == AttentionType::kEncoderOnly || attn_type == AttentionType::kEncoder;
    return encoder ? *sliding_window - 1 : 0;
  }
  double default_scale() const;
  double scale() const { return softmax_scale ? *softmax_scale : default_scale(); }
  KvCacheDType resolved_kv_dtype() const { return resolve_kv_dtype(kv_cache_dtype, dtype); }
  // Everything that can change a selection, in a stable printable form; layers with equal
  // signatures share one selection. layer_index is not part of it; whether the layer reads a
  // shared cache is (not which layer it reads).
  std::string signature() const;
  bool operator==(const LayerSpec&) const = default;
};

// A layer that holds no attention KV but fixed-size recurrent state per request.
enum class StateKind { kMamba, kLinearAttention, kShortConv };

struct StateLayerSpec {
  int layer_index = 0;
  StateKind kind = StateKind::kMamba;
  int64_t state_bytes_per_request = 0;  // conv + ssm state (or linear-attention state)
  DType dtype = DType::kBFloat16;
};

std::string_view to_string(StateKind k);

// How a model is served (vLLM's --runner): generating tokens, or pooling its hidden states
// (embedding, classification, reward), where a request ends with its prefill. kAuto: decided from
// the model (ModelSpec::runner_reason).
enum class Runner { kAuto, kGenerate, kPooling };
std::string_view to_string(Runner r);
Runner parse_runner(std::string_view s);  // auto|generate|pooling

// What a model's dtype is decided from: a stack's rule (resolve_model_dtype, selector.hpp) maps it
// to the dtype the model runs in on a device.
struct ModelDtypeQuery {
  std::string model_type;
  std::optional<DType> config_dtype;  // as the config writes it; nullopt: it names none
  bool pooling = false;               // served as a pooling model (ModelSpec::pooling)
  std::optional<DType> requested;     // --dtype; nullopt: auto
};
struct ModelDtype {
  DType dtype = DType::kBFloat16;
  std::string note;  // why it is not the config's dtype (also a ModelSpec note); empty when it is
};

struct ModelSpec {
  std::string name;                         // short name or file stem
  std::string source;                       // path of the config.json it came from
  std::string model_type;                   // HF model_type
  DType dtype = DType::kBFloat16;           // what the model runs in
  std::optional<DType> config_dtype;        // what its config writes (nullopt: nothing)
  bool pooling = false;                     // served as a pooling model: no decode steps
  std::string runner_reason;                // why it is (or is not) pooled
  int num_layers = 0;                       // all layers, attention + state + others
  std::vector<LayerSpec> attention_layers;  // ordered by layer_index (encoder layers first)
  std::vector<StateLayerSpec> state_layers;
  bool is_encoder_decoder = false;
  int64_t max_position_embeddings = 0;
  // Encoder-decoder models: the longest encoder input (Whisper's max_source_positions, 1500 audio
  // frames), the length of their cross-attention caches; 0: max_position_embeddings.
  int64_t max_encoder_positions = 0;
  // PrefixLM models (layers with mm_prefix): placeholder tokens of one image, whose positions
  // attend to each other bidirectionally (num_image_tokens, mm_tokens_per_image); else 0.
  int mm_item_tokens = 0;
  std::vector<std::string> notes;  // assumptions the reader made (each also logged as a warning)
};

}  // namespace attnkit
