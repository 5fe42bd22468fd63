// Shared builders for the KV tests: hand-made models and capability declarations.
#pragma once

#include <string>
#include <vector>

#include "attnkit/capability.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/types.hpp"

namespace attnkit::kvtest {

inline Capabilities caps(std::string name, std::vector<BlockSizeEntry> sizes,
                         std::optional<int> preferred = std::nullopt) {
  Capabilities c;
  c.name = std::move(name);
  c.kernel_block_sizes = std::move(sizes);
  c.preferred_block_size = preferred;
  return c;
}

inline LayerSpec attn_layer(int index, int heads, int kv_heads, int head_size,
                            KvCacheDType kv = KvCacheDType::kAuto, DType dtype = DType::kBFloat16) {
  LayerSpec l;
  l.layer_index = index;
  l.num_heads = heads;
  l.num_kv_heads = kv_heads;
  l.head_size = head_size;
  l.head_size_v = head_size;
  l.dtype = dtype;
  l.kv_cache_dtype = kv;
  return l;
}

// llama-3.1-8b: 32 layers, 32 q / 8 kv heads of 128.
inline ModelSpec llama_8b(KvCacheDType kv = KvCacheDType::kAuto) {
  ModelSpec m;
  m.name = "llama-3.1-8b";
  m.num_layers = 32;
  m.max_position_embeddings = 131072;
  for (int i = 0; i < 32; ++i) m.attention_layers.push_back(attn_layer(i, 32, 8, 128, kv));
  return m;
}

// nemotron-3-nano-30b-a3b, hand-built from its config: hybrid_override_pattern with 6 attention
// layers (32 q / 2 kv heads of 128) and 23 mamba2 layers (64 heads x 64, 8 groups, d_state 128,
// conv kernel 4, bf16 conv state, fp32 ssm state).
inline ModelSpec nemotron_nano() {
  const std::string pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
  ModelSpec m;
  m.name = "nemotron-3-nano-30b-a3b";
  m.num_layers = int(pattern.size());
  m.max_position_embeddings = 262144;
  // vLLM's Mamba2 state (the model reader's formula, tested in tests/model): conv (4-1) x
  // (64*64 + 2*8*128) bf16 + ssm 64 x 64 x 128 fp32.
  const int64_t state = 3 * 6144 * 2 + 64 * 64 * 128 * 4;
  for (int i = 0; i < int(pattern.size()); ++i) {
    if (pattern[size_t(i)] == '*') m.attention_layers.push_back(attn_layer(i, 32, 2, 128));
    if (pattern[size_t(i)] == 'M') {
      StateLayerSpec s;
      s.layer_index = i;
      s.kind = StateKind::kMamba;
      s.state_bytes_per_request = state;
      m.state_layers.push_back(s);
    }
  }
  return m;
}

inline std::vector<std::vector<const Capabilities*>> same_backend(const ModelSpec& m,
                                                                  const Capabilities& c) {
  return std::vector<std::vector<const Capabilities*>>(m.attention_layers.size(), {&c});
}

}  // namespace attnkit::kvtest
