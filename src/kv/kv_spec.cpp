// Per-layer KV specs: what memory each layer kind needs, page bytes for every KV dtype.
#include <fmt/format.h>

#include <algorithm>

#include "attnkit/attention.hpp"
#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"

namespace attnkit {

std::string_view to_string(KvSpecKind k) {
  switch (k) {
    case KvSpecKind::kFullAttention:
      return "full_attention";
    case KvSpecKind::kSlidingWindow:
      return "sliding_window";
    case KvSpecKind::kChunkedLocal:
      return "chunked_local_attention";
    case KvSpecKind::kMlaLatent:
      return "mla_latent";
    case KvSpecKind::kState:
      return "state";
    case KvSpecKind::kCrossAttention:
      return "cross_attention";
    case KvSpecKind::kShared:
      return "shared";
    case KvSpecKind::kNoCache:
      return "no_cache";
  }
  return "?";
}

namespace {
// Data bytes + nvfp4 block-scale bytes of one head vector of `size` elements.
int64_t head_vector_bytes(const KvLayerSpec& s, int size) {
  if (size <= 0) return 0;
  return kv_bytes_per_head_vector(s.dtype, s.model_dtype, size) +
         kv_block_scale_bytes_per_head_vector(s.dtype, size);
}
}  // namespace

int64_t KvLayerSpec::k_token_head_bytes() const {
  return is_attention() ? head_vector_bytes(*this, head_size) : 0;
}

int64_t KvLayerSpec::v_token_head_bytes() const {
  if (!is_attention() || kind == KvSpecKind::kMlaLatent) return 0;
  return head_vector_bytes(*this, head_size_v);
}

int64_t KvLayerSpec::bytes_per_token() const {
  return int64_t(num_kv_heads) * (k_token_head_bytes() + v_token_head_bytes());
}

int64_t KvLayerSpec::page_bytes(int block_size) const {
  if (kind == KvSpecKind::kState) return state_bytes;
  return bytes_per_token() * block_size;
}

int KvLayerSpec::scale_count() const {
  if (!is_attention()) return 0;
  const int per_kv = kind == KvSpecKind::kMlaLatent ? 1 : 2;
  switch (scale_granularity) {
    case ScaleGranularity::kNone:
      return 0;
    case ScaleGranularity::kPerTensor:
    case ScaleGranularity::kPerBlock16:
      return per_kv;  // nvfp4 keeps a per-tensor fp32 too
    case ScaleGranularity::kPerHead:
      return per_kv * num_kv_heads;
  }
  return 0;
}

std::string KvLayerSpec::group_key() const {
  std::string key = fmt::format("{}|{}|h{}|d{}/{}|{}|{}|{}", to_string(kind), to_string(attn_type),
                                num_kv_heads, head_size, head_size_v, to_string(model_dtype),
                                to_string(dtype), to_string(scale_granularity));
  if (sliding_window) key += fmt::format("|w{}", *sliding_window);
  if (attention_chunk_size) key += fmt::format("|c{}", *attention_chunk_size);
  if (kind == KvSpecKind::kState) key += fmt::format("|s{}", state_bytes);
  return key;
}

int64_t KvLayerSpec::first_visible_key(int64_t position) const {
  if (kind == KvSpecKind::kSlidingWindow)
    return std::max<int64_t>(0, position - (*sliding_window - 1));
  if (kind == KvSpecKind::kChunkedLocal)
    return std::max<int64_t>(0, chunk_first_key(position, *attention_chunk_size));
  return 0;
}

KvLayerSpec kv_layer_spec(const LayerSpec& l) {
  KvLayerSpec s;
  s.layer_index = l.layer_index;
  s.attn_type = l.attn_type;
  s.model_dtype = l.dtype;
  s.dtype = l.resolved_kv_dtype();
  s.sliding_window = l.sliding_window;
  s.attention_chunk_size = l.attention_chunk_size;
  s.pinned_block_size = l.block_size;
  const KvFormatInfo& info = kv_format_info(s.dtype);
  if (s.dtype == KvCacheDType::kAuto || !info.needs_scales) {
    if (l.kv_scale_granularity != ScaleGranularity::kNone)
      throw InvalidArgument(
          fmt::format("layer {}: kv_scale_granularity {} needs a quantized KV cache dtype, got {}",
                      l.layer_index, to_string(l.kv_scale_granularity), to_string(s.dtype)));
    s.scale_granularity = ScaleGranularity::kNone;
  } else {
    s.scale_granularity = l.kv_scale_granularity == ScaleGranularity::kNone
                              ? info.default_scale_granularity
                              : l.kv_scale_granularity;
    const bool nvfp4 = s.dtype == KvCacheDType::kNvfp4;
    if (nvfp4 != (s.scale_granularity == ScaleGranularity::kPerBlock16))
      throw InvalidArgument(
          fmt::format("layer {}: KV cache dtype {} takes scale granularity {}, got {}",
                      l.layer_index, to_string(s.dtype), to_string(info.default_scale_granularity),
                      to_string(s.scale_granularity)));
  }
  if (l.sliding_window && *l.sliding_window <= 0)
    throw InvalidArgument(fmt::format("layer {}: sliding_window must be > 0, got {}", l.layer_index,
                                      *l.sliding_window));

  if (l.attention_chunk_size && *l.attention_chunk_size <= 0)
    throw InvalidArgument(fmt::format("layer {}: attention_chunk_size must be > 0, got {}",
                                      l.layer_index, *l.attention_chunk_size));
  // vLLM's rule too (kv_cache_interface: a spec has at most one of the two).
  if (l.attention_chunk_size && l.sliding_window)
    throw InvalidArgument(
        fmt::format("layer {}: a sliding window ({}) and chunked local attention ({}) cannot mix",
                    l.layer_index, *l.sliding_window, *l.attention_chunk_size));

  if (l.attn_type == AttentionType::kEncoder || l.attn_type == AttentionType::kEncoderOnly) {
    s.kind = KvSpecKind::kNoCache;
  } else if (l.kv_sharing_target_layer) {
    s.kind = KvSpecKind::kShared;
    s.shares_with = l.kv_sharing_target_layer;
  } else if (l.is_mla()) {
    s.kind = KvSpecKind::kMlaLatent;
  } else if (l.attn_type == AttentionType::kCross) {
    s.kind = KvSpecKind::kCrossAttention;
  } else if (l.sliding_window) {
    s.kind = KvSpecKind::kSlidingWindow;
  } else if (l.attention_chunk_size) {
    s.kind = KvSpecKind::kChunkedLocal;
  } else {
    s.kind = KvSpecKind::kFullAttention;
  }

  if (l.is_mla()) {
    if (l.mla->kv_lora_rank <= 0 || l.mla->qk_rope_head_dim < 0)
      throw InvalidArgument(fmt::format("layer {}: MLA kv_lora_rank must be > 0, got {}",
                                        l.layer_index, l.mla->kv_lora_rank));
    s.num_kv_heads = 1;
    s.head_size = l.mla->decode_head_size();
    s.head_size_v = l.mla->kv_lora_rank;
  } else {
    s.num_kv_heads = l.num_kv_heads;
    s.head_size = l.head_size;
    s.head_size_v = l.head_size_v ? l.head_size_v : l.head_size;
  }
  if (s.num_kv_heads <= 0 || s.head_size <= 0 || s.head_size_v <= 0)
    throw InvalidArgument(
        fmt::format("layer {}: num_kv_heads, head_size and head_size_v must be > 0, got {}, {}, {}",
                    l.layer_index, s.num_kv_heads, s.head_size, s.head_size_v));
  return s;
}

KvLayerSpec kv_layer_spec(const StateLayerSpec& l) {
  if (l.state_bytes_per_request <= 0)
    throw InvalidArgument(fmt::format("state layer {}: state_bytes_per_request must be > 0, got {}",
                                      l.layer_index, l.state_bytes_per_request));
  KvLayerSpec s;
  s.layer_index = l.layer_index;
  s.kind = KvSpecKind::kState;
  s.model_dtype = l.dtype;
  s.dtype = resolve_kv_dtype(KvCacheDType::kAuto, l.dtype);
  s.state_bytes = l.state_bytes_per_request;
  return s;
}

}  // namespace attnkit
