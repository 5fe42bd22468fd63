#include "model/state_bytes.hpp"

namespace attnkit::model_detail {

int64_t mamba1_state_bytes(const Mamba1Dims& d, DType conv_dtype, DType ssm_dtype) {
  return int64_t(d.conv_kernel - 1) * d.intermediate * dtype_bytes(conv_dtype) +
         d.intermediate * d.state_size * dtype_bytes(ssm_dtype);
}

int64_t mamba2_state_bytes(const Mamba2Dims& d, DType conv_dtype, DType ssm_dtype) {
  const int64_t heads_dims = int64_t(d.num_heads) * d.head_dim;
  const int64_t intermediate = d.intermediate ? d.intermediate : heads_dims;
  const int64_t conv_dim = intermediate + 2 * int64_t(d.n_groups) * d.state_size;
  const int64_t conv = int64_t(d.conv_kernel - 1) * conv_dim * dtype_bytes(conv_dtype);
  const int64_t temporal = heads_dims * d.state_size * dtype_bytes(ssm_dtype);
  return conv + temporal;
}

int64_t gated_delta_net_state_bytes(const GatedDeltaNetDims& d, DType conv_dtype, DType ssm_dtype) {
  const int64_t conv_dim =
      2 * int64_t(d.num_k_heads) * d.head_k_dim + int64_t(d.num_v_heads) * d.head_v_dim;
  const int64_t conv = int64_t(d.conv_kernel - 1) * conv_dim * dtype_bytes(conv_dtype);
  const int64_t temporal =
      int64_t(d.num_v_heads) * d.head_v_dim * d.head_k_dim * dtype_bytes(ssm_dtype);
  return conv + temporal;
}

}  // namespace attnkit::model_detail
