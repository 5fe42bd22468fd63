// Hand-built layers shaped like the models the vLLM stack tests talk about.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "attnkit/device.hpp"
#include "attnkit/selector.hpp"
#include "attnkit/types.hpp"

namespace attnkit::vllm_test {

inline LayerSpec standard(int heads, int kv_heads, int head) {
  LayerSpec s;
  s.num_heads = heads;
  s.num_kv_heads = kv_heads;
  s.head_size = s.head_size_v = head;
  s.dtype = DType::kBFloat16;
  return s;
}

// gemma-2-9b: head 256, sliding window 4096 on alternate layers, logit softcap 50.
inline LayerSpec gemma2(bool sliding = true) {
  LayerSpec s = standard(16, 8, 256);
  if (sliding) s.sliding_window = 4096;
  s.logits_soft_cap = 50.0;
  return s;
}

// gpt-oss-20b: head 64, attention sinks, sliding window 128 on alternate layers.
inline LayerSpec gpt_oss(bool sliding = true) {
  LayerSpec s = standard(64, 8, 64);
  s.sinks = true;
  if (sliding) s.sliding_window = 128;
  return s;
}

inline LayerSpec mla(int qk_nope, int qk_rope, int v, int heads = 128) {
  LayerSpec s;
  s.num_heads = heads;
  s.num_kv_heads = 1;
  MlaDims m;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = qk_nope;
  m.qk_rope_head_dim = qk_rope;
  m.v_head_dim = v;
  m.q_lora_rank = 1536;
  s.mla = m;
  s.head_size = m.decode_head_size();
  s.head_size_v = m.kv_lora_rank;
  s.dtype = DType::kBFloat16;
  return s;
}
inline LayerSpec deepseek_v3() { return mla(128, 64, 128); }
inline LayerSpec glm5() { return mla(192, 64, 256, 64); }

inline bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

inline std::vector<std::string> reasons_of(const std::vector<Rejection>& rs,
                                           const std::string& backend) {
  for (const auto& r : rs)
    if (r.backend == backend) return r.reasons;
  return {};
}

}  // namespace attnkit::vllm_test
