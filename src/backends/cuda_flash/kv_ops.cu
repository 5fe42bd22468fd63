// Cache maintenance kernels: the KV write through the slot mapping (saturating fp8, scales
// divide), the fresh-page zeroing the KV cache manager asks for, and a random fill for tests and
// benchmarks (never time or test on zeros).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "backends/cuda_flash/launch.hpp"
#include "backends/cuda_flash/pdl.cuh"

namespace attnkit::cuda_flash {
namespace {

__device__ __forceinline__ float load_as_float(const void* p, int64_t i, int kind) {
  switch (kind) {
    case 0:
      return __half2float(static_cast<const __half*>(p)[i]);
    case 1:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

// kind: 0 fp16, 1 bf16, 2 e4m3, 3 e5m2, 4 fp32
__device__ __forceinline__ void store_converted(char* dst, int64_t i, float x, int kind) {
  switch (kind) {
    case 0:
      reinterpret_cast<__half*>(dst)[i] = __float2half_rn(x);
      return;
    case 1:
      reinterpret_cast<__nv_bfloat16*>(dst)[i] = __float2bfloat16_rn(x);
      return;
    case 2:
      reinterpret_cast<unsigned char*>(dst)[i] =
          __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
      return;
    case 3:
      reinterpret_cast<unsigned char*>(dst)[i] =
          __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
      return;
    default:
      reinterpret_cast<float*>(dst)[i] = x;
      return;
  }
}

// One CTA per token; threads stride over (tensor, head, element).
__global__ void kv_write_kernel(const KvWriteLaunch p) {
  pdl_launch_dependents();  // the attention call that reads these rows waits for completion
  const int tok = blockIdx.x;
  const int64_t slot = p.slot_mapping[tok];
  if (slot < 0) return;
  const int64_t blk = slot / p.block_size, off = slot % p.block_size;
  for (int t = 0; t < p.num_tensors; ++t) {
    const int n = p.num_kv_heads * p.head[t];
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const int h = i / p.head[t], d = i % p.head[t];
      float x = load_as_float(p.src[t], tok * p.src_stride_token[t] + h * p.src_stride_head[t] + d,
                              p.in_kind);
      if (p.scale[t]) x /= p.scale[t][p.scale_per_head ? h : 0];
      char* row = p.dst.base[t] + blk * p.dst.stride_block[t] + h * p.dst.stride_head[t] +
                  off * p.dst.stride_token[t];
      store_converted(row, d, x, p.out_kind);
    }
  }
}

// One CTA per (listed page, tensor): 16-byte stores where the page allows, bytes otherwise.
__global__ void zero_pages_kernel(const ZeroPagesLaunch p) {
  char* page = p.tensors[blockIdx.y] + int64_t(p.pages[blockIdx.x]) * p.page_bytes;
  if (((reinterpret_cast<uintptr_t>(page) | uintptr_t(p.page_bytes)) & 15u) == 0) {
    uint4* q = reinterpret_cast<uint4*>(page);
    for (int64_t i = threadIdx.x; i < p.page_bytes / 16; i += blockDim.x)
      q[i] = make_uint4(0u, 0u, 0u, 0u);
  } else {
    for (int64_t i = threadIdx.x; i < p.page_bytes; i += blockDim.x) page[i] = 0;
  }
}

__device__ __forceinline__ uint32_t hash32(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return uint32_t(x);
}

__global__ void fill_random_kernel(void* data, int64_t n, int kind, uint64_t seed, float amp) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float u = (hash32(seed * 0x9e3779b97f4a7c15ull + uint64_t(i)) >> 8) * (1.f / 16777216.f);
    store_converted(static_cast<char*>(data), i, (2.f * u - 1.f) * amp, kind);
  }
}

__global__ void read_probe_kernel(const uint4* data, int64_t n, uint32_t* sink, bool streaming) {
  uint32_t acc = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    // streaming: the decode kernels' access pattern; normal loads replace what L2 holds
    const uint4 v = streaming ? __ldcs(data + i) : __ldcg(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  acc = __reduce_xor_sync(0xffffffffu, acc);
  if (threadIdx.x % 32 == 0) atomicXor(sink + blockIdx.x, acc);
}

}  // namespace

void launch_read_probe(const void* data, int64_t bytes, uint32_t* sink, int sink_words,
                       bool streaming, void* stream) {
  read_probe_kernel<<<sink_words, 512, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const uint4*>(data), bytes / 16, sink, streaming);
}

void launch_kv_write(const KvWriteLaunch& p, void* stream) {
  if (p.num_tokens == 0) return;
  kv_write_kernel<<<p.num_tokens, 128, 0, static_cast<cudaStream_t>(stream)>>>(p);
}

void launch_zero_pages(const ZeroPagesLaunch& p, void* stream) {
  if (p.num_pages == 0 || p.num_tensors == 0) return;
  const dim3 grid(unsigned(p.num_pages), unsigned(p.num_tensors));
  zero_pages_kernel<<<grid, 256, 0, static_cast<cudaStream_t>(stream)>>>(p);
}

void launch_fill_random(void* data, int64_t n, int elem_bytes, int kind, uint64_t seed, float amp,
                        void* stream) {
  (void)elem_bytes;
  if (n == 0) return;
  const int64_t blocks = std::min<int64_t>((n + 255) / 256, 132 * 16);
  fill_random_kernel<<<unsigned(blocks), 256, 0, static_cast<cudaStream_t>(stream)>>>(data, n, kind,
                                                                                      seed, amp);
}

}  // namespace attnkit::cuda_flash
