// Per-request recurrent state of the non-attention layers of hybrid models, sized as vLLM sizes
// it (tensor parallel size 1, no speculative tokens).
#pragma once

#include <cstdint>

#include "attnkit/types.hpp"

namespace attnkit::model_detail {

// Mamba (Mamba-1; vLLM MambaStateShapeCalculator.mamba1_state_shape, used by Jamba's
// get_mamba_state_shape_from_config with intermediate_size = mamba_expand * hidden_size):
//   conv state     (conv_kernel - 1) x intermediate,  conv dtype
//   temporal state intermediate x state_size,          ssm dtype
struct Mamba1Dims {
  int64_t intermediate = 0;
  int state_size = 0;
  int conv_kernel = 0;
};
int64_t mamba1_state_bytes(const Mamba1Dims& d, DType conv_dtype, DType ssm_dtype);

// Mamba2 (vLLM MambaStateShapeCalculator.mamba2_state_shape; NemotronH passes intermediate_size =
// mamba_num_heads * mamba_head_dim, Bamba mamba_expand * hidden_size):
//   conv state     (conv_kernel - 1) x (intermediate + 2 * n_groups * state_size), conv dtype
//   temporal state num_heads x head_dim x state_size,                             ssm dtype
struct Mamba2Dims {
  int num_heads = 0;
  int head_dim = 0;
  int n_groups = 0;
  int state_size = 0;
  int conv_kernel = 0;
  int64_t intermediate = 0;  // 0: num_heads * head_dim
};
int64_t mamba2_state_bytes(const Mamba2Dims& d, DType conv_dtype, DType ssm_dtype);

// Gated DeltaNet linear attention (Qwen3-Next; vLLM gated_delta_net_state_shape):
//   conv state     (conv_kernel - 1) x (2 * num_k_heads * head_k_dim + num_v_heads * head_v_dim)
//   temporal state num_v_heads x head_v_dim x head_k_dim
struct GatedDeltaNetDims {
  int num_k_heads = 0;
  int num_v_heads = 0;
  int head_k_dim = 0;
  int head_v_dim = 0;
  int conv_kernel = 0;
};
int64_t gated_delta_net_state_bytes(const GatedDeltaNetDims& d, DType conv_dtype, DType ssm_dtype);

}  // namespace attnkit::model_detail
