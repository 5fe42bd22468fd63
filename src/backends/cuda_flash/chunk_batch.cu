// Chunked local attention's virtual batch (tiles.hpp chunk_piece), built on the device from the
// caller's metadata so that run() stays free of host work and graph-capturable.
#include <cuda_runtime.h>

#include <string>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/launch.hpp"
#include "backends/cuda_flash/pdl.cuh"
#include "backends/cuda_flash/tiles.hpp"

namespace attnkit::cuda_flash {
namespace {

constexpr int kChunkThreads = 128;

__device__ __forceinline__ int seq_pieces(const ChunkBatchLaunch& p, int s) {
  return chunk_pieces(p.cu_seqlens_q[s + 1] - p.cu_seqlens_q[s], p.seqused_k[s], p.chunk);
}

// One CTA per sequence: its first piece's index is the pieces of the sequences before it.
__global__ void __launch_bounds__(kChunkThreads) chunk_batch_kernel(const ChunkBatchLaunch p) {
  __shared__ int warp_sum[kChunkThreads / 32];
  const int s = blockIdx.x;
  int before = 0;
  for (int t = threadIdx.x; t < s; t += kChunkThreads) before += seq_pieces(p, t);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) before += __shfl_xor_sync(0xffffffffu, before, o);
  if (threadIdx.x % 32 == 0) warp_sum[threadIdx.x / 32] = before;
  const int q0 = p.cu_seqlens_q[s], q = p.cu_seqlens_q[s + 1] - q0, k = p.seqused_k[s];
  const int pieces = chunk_pieces(q, k, p.chunk);
  // The previous kernel may still read the workspace (the previous layer's pieces).
  pdl_wait_primary();
  __syncthreads();
  int v0 = 0;
#pragma unroll
  for (int w = 0; w < kChunkThreads / 32; ++w) v0 += warp_sum[w];
  if (s == p.num_seqs - 1 && threadIdx.x == 0 && v0 + pieces <= p.capacity)
    p.out_cu_seqlens_q[v0 + pieces] = p.cu_seqlens_q[s + 1];
  const int32_t* src = p.block_table + int64_t(s) * p.block_table_stride;
  for (int j = 0; j < pieces && v0 + j < p.capacity; ++j) {
    const ChunkPiece piece = chunk_piece(q, k, p.chunk, j);
    if (threadIdx.x == 0) {
      p.out_cu_seqlens_q[v0 + j] = q0 + piece.row0;
      p.out_seqused_k[v0 + j] = piece.keys;
    }
    const int64_t first = piece.first_key / p.block_size;
    int64_t n = (piece.keys + p.block_size - 1) / p.block_size;
    n = min(n, int64_t(p.out_stride));
    n = min(n, int64_t(p.block_table_stride) - first);
    int32_t* dst = p.out_block_table + int64_t(v0 + j) * p.out_stride;
    for (int64_t e = threadIdx.x; e < n; e += kChunkThreads) dst[e] = src[first + e];
  }
}

}  // namespace

void launch_chunk_batch(const ChunkBatchLaunch& p, bool pdl, void* stream) {
  if (p.num_seqs == 0) return;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(p.num_seqs));
  cfg.blockDim = dim3(kChunkThreads);
  cfg.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = pdl ? 1 : 0;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, chunk_batch_kernel, p);
  if (e != cudaSuccess)
    throw Error(std::string("CUDA kernel launch failed (chunk batch): ") + cudaGetErrorString(e));
}

}  // namespace attnkit::cuda_flash
