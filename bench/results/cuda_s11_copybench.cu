// Throwaway (session 11): how fast can the 1x32k GQA 32/4 decode's K/V pages (bf16, head 128,
// HND pages of 128 keys, shuffled block table) be streamed into shared memory, with no attention
// arithmetic, by
//   cpasync: 16-byte cp.async by all 128 threads into a ring of S 64-key stages (v2o's decode
//            form: one barrier pair per tile),
//   bulk:    one cp.async.bulk (TMA, 1-D) per 16 KB K or V run, completion on an mbarrier per
//            stage, issued by one thread (the Hopper form's copy),
//   ldg:     16-byte global loads into registers, 16 per thread per tile, two tiles unrolled,
// with 32 splits (128 CTAs, one per SM) or 64 (256, two per SM). Each stage is read back from
// shared memory (every byte, 16-byte loads) so the copies cannot be skipped. Timed with events
// around the kernel alone after an L2 flush: "write" (cudaMemset of 256 MiB, L2 left dirty) or
// "clean" (a 256 MiB read). Prints one JSON line per (method, stages, splits, protocol).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>
#include <cstdlib>

constexpr int kD = 128, kPage = 128, kTile = 64;
constexpr int kRowB = kD * 2, kRunB = kTile * kRowB;  // 16 KB per K or V run of a tile

#define CK(x)                                                                       \
  do {                                                                              \
    cudaError_t e = (x);                                                            \
    if (e != cudaSuccess) {                                                         \
      std::printf("{\"error\":\"%s line %d\"}\n", cudaGetErrorString(e), __LINE__); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

__device__ __forceinline__ uint32_t saddr(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

struct Work {
  const uint8_t* k;
  const uint8_t* v;
  const int* table;
  int splits, hkv, ctx;
  unsigned* sink;
};

// CTA (sequence, KV head, split) of blockIdx.x; key positions are within the sequence.
struct Cta {
  int seq, head, k0, nt;
};
__device__ __forceinline__ Cta cta_of(const Work& w) {
  const int split = blockIdx.x % w.splits, sh = blockIdx.x / w.splits;
  const int per = w.ctx / w.splits;
  return {sh / w.hkv, sh % w.hkv, split * per, per / kTile};
}
__device__ __forceinline__ const uint8_t* run_at(const Work& w, const uint8_t* base, const Cta& c,
                                                 int key) {
  const int blk = w.table[c.seq * (w.ctx / kPage) + key / kPage];
  return base + ((size_t(blk) * w.hkv + c.head) * kPage + key % kPage) * kRowB;
}
// L2 policy of the copies: 0 normal, 1 evict_first.
__device__ __forceinline__ uint64_t policy(int evict_first) {
  uint64_t p;
  if (evict_first)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  else
    asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}

__device__ __forceinline__ unsigned consume(const uint8_t* stage, int tid) {
  unsigned acc = 0;
  const uint4* s = reinterpret_cast<const uint4*>(stage);
#pragma unroll 4
  for (int i = tid; i < 2 * kRunB / 16; i += 128) {
    const uint4 x = s[i];
    acc ^= x.x ^ x.y ^ x.z ^ x.w;
  }
  return acc;
}

template <int S>
__global__ void __launch_bounds__(128) k_cpasync(Work w, int evict_first) {
  extern __shared__ __align__(128) uint8_t sm[];
  const Cta cta = cta_of(w);
  const int k0 = cta.k0, nt = cta.nt, tid = threadIdx.x;
  const uint64_t pol = policy(evict_first);
  auto issue = [&](int t) {
    const uint8_t* ks = run_at(w, w.k, cta, k0 + t * kTile);
    const uint8_t* vs = run_at(w, w.v, cta, k0 + t * kTile);
    uint8_t* d = sm + (t % S) * 2 * kRunB;
#pragma unroll
    for (int c = tid; c < kRunB / 16; c += 128) {
      // the shared address through a shuffle: ptxas 13.0 splits it into a uniform base + lane
      // offset and then loses the cache-policy operand (NOTES, session 5)
      const uint32_t dk = __shfl_sync(0xffffffffu, saddr(d + c * 16), threadIdx.x % 32);
      const uint32_t dv = __shfl_sync(0xffffffffu, saddr(d + kRunB + c * 16), threadIdx.x % 32);
      asm volatile("cp.async.cg.shared.global.L2::cache_hint.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dk),
                   "l"(ks + c * 16), "l"(pol));
      asm volatile("cp.async.cg.shared.global.L2::cache_hint.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dv),
                   "l"(vs + c * 16), "l"(pol));
    }
  };
  unsigned acc = 0;
#pragma unroll
  for (int t = 0; t < S - 1; ++t) {
    if (t < nt) issue(t);
    asm volatile("cp.async.commit_group;\n" ::);
  }
  for (int t = 0; t < nt; ++t) {
    if (t + S - 1 < nt) issue(t + S - 1);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(S - 1));
    __syncthreads();
    acc ^= consume(sm + (t % S) * 2 * kRunB, tid);
    __syncthreads();
  }
  if (acc == 0x9e3779b9u) w.sink[0] = acc;
}


template <int S>
__global__ void __launch_bounds__(128) k_cpasync_plain(Work w) {
  extern __shared__ __align__(128) uint8_t sm[];
  const Cta cta = cta_of(w);
  const int k0 = cta.k0, nt = cta.nt, tid = threadIdx.x;
  auto issue = [&](int t) {
    const uint8_t* ks = run_at(w, w.k, cta, k0 + t * kTile);
    const uint8_t* vs = run_at(w, w.v, cta, k0 + t * kTile);
    uint8_t* d = sm + (t % S) * 2 * kRunB;
#pragma unroll
    for (int c = tid; c < kRunB / 16; c += 128) {
      asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(saddr(d + c * 16)),
                   "l"(ks + c * 16));
      asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(
                       saddr(d + kRunB + c * 16)),
                   "l"(vs + c * 16));
    }
  };
  unsigned acc = 0;
#pragma unroll
  for (int t = 0; t < S - 1; ++t) {
    if (t < nt) issue(t);
    asm volatile("cp.async.commit_group;\n" ::);
  }
  for (int t = 0; t < nt; ++t) {
    if (t + S - 1 < nt) issue(t + S - 1);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(S - 1));
    __syncthreads();
    acc ^= consume(sm + (t % S) * 2 * kRunB, tid);
    __syncthreads();
  }
  if (acc == 0x9e3779b9u) w.sink[0] = acc;
}

template <int S>
__global__ void __launch_bounds__(128) k_bulk(Work w, int evict_first) {
  extern __shared__ __align__(128) uint8_t sm[];
  __shared__ __align__(8) uint64_t full[S];
  const Cta cta = cta_of(w);
  const int k0 = cta.k0, nt = cta.nt, tid = threadIdx.x;
  const uint64_t pol = policy(evict_first);
  if (tid == 0) {
    for (int s = 0; s < S; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(saddr(&full[s])));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::);
  }
  __syncthreads();
  auto issue = [&](int t) {  // one thread
    const uint8_t* ks = run_at(w, w.k, cta, k0 + t * kTile);
    const uint8_t* vs = run_at(w, w.v, cta, k0 + t * kTile);
    uint8_t* d = sm + (t % S) * 2 * kRunB;
    const uint32_t bar = saddr(&full[t % S]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(2 * kRunB));
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], "
        "[%1], %2, [%3], %4;\n" ::"r"(saddr(d)),
        "l"(ks), "r"(kRunB), "r"(bar), "l"(pol)
        : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], "
        "[%1], %2, [%3], %4;\n" ::"r"(saddr(d + kRunB)),
        "l"(vs), "r"(kRunB), "r"(bar), "l"(pol)
        : "memory");
  };
  if (tid == 0)
    for (int t = 0; t < S - 1 && t < nt; ++t) issue(t);
  unsigned acc = 0;
  for (int t = 0; t < nt; ++t) {
    if (tid == 0 && t + S - 1 < nt) issue(t + S - 1);
    const uint32_t bar = saddr(&full[t % S]);
    const uint32_t parity = (t / S) & 1;
    uint32_t done = 0;
    while (!done)
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, "
          "0, p; }\n"
          : "=r"(done)
          : "r"(bar), "r"(parity)
          : "memory");
    acc ^= consume(sm + (t % S) * 2 * kRunB, tid);
    __syncthreads();  // the stage is refilled in the next iteration
  }
  if (acc == 0x9e3779b9u) w.sink[0] = acc;
}

__global__ void __launch_bounds__(128) k_ldg(Work w) {
  const Cta cta = cta_of(w);
  const int k0 = cta.k0, nt = cta.nt, tid = threadIdx.x;
  unsigned acc = 0;
  for (int t = 0; t < nt; t += 2) {
    uint4 x[32];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const uint4* ks = reinterpret_cast<const uint4*>(run_at(w, w.k, cta, k0 + (t + u) * kTile));
      const uint4* vs = reinterpret_cast<const uint4*>(run_at(w, w.v, cta, k0 + (t + u) * kTile));
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        x[u * 16 + i] = __ldcs(ks + tid + i * 128);
        x[u * 16 + 8 + i] = __ldcs(vs + tid + i * 128);
      }
    }
#pragma unroll
    for (int i = 0; i < 32; ++i) acc ^= x[i].x ^ x[i].y ^ x[i].z ^ x[i].w;
  }
  if (acc == 0x9e3779b9u) w.sink[0] = acc;
}

__global__ void k_read(const uint4* p, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint4 x = p[i];
    acc ^= x.x ^ x.y ^ x.z ^ x.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

__global__ void k_empty() {}

int main() {
  // Shape from the environment: SEQS x CTX keys, HKV KV heads (default 1 x 32768 x 4); SPLITS, a
  // comma-free list is not needed: splits 32/64 for one sequence, 1/2/4 otherwise.
  const int seqs = getenv("SEQS") ? atoi(getenv("SEQS")) : 1;
  const int ctx = getenv("CTX") ? atoi(getenv("CTX")) : 32768;
  const int hkv = getenv("HKV") ? atoi(getenv("HKV")) : 4;
  const int bps = ctx / kPage, blocks = seqs * bps;
  const size_t bytes = size_t(blocks) * hkv * kPage * kRowB;  // per K or V
  uint8_t *k, *v, *flush;
  unsigned* sink;
  int* table;
  CK(cudaMalloc(&k, 2 * bytes));  // K, then V: one range for the contiguous read
  v = k + bytes;
  CK(cudaMalloc(&flush, size_t(256) << 20));
  CK(cudaMalloc(&sink, 64));
  CK(cudaMalloc(&table, blocks * sizeof(int)));
  CK(cudaMemset(k, 0x3c, bytes));
  CK(cudaMemset(v, 0x3d, bytes));
  std::vector<int> h(blocks);
  for (int i = 0; i < blocks; ++i) h[i] = i;
  const bool shuffled = !getenv("IDENTITY");
  if (shuffled) std::shuffle(h.begin(), h.end(), std::mt19937(7));
  CK(cudaMemcpy(table, h.data(), blocks * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto flush_l2 = [&](bool write) {
    if (write)
      cudaMemsetAsync(flush, 0x11, size_t(256) << 20);
    else
      k_read<<<1056, 256>>>(reinterpret_cast<const uint4*>(flush), (size_t(256) << 20) / 16, sink);
  };
  auto time_it = [&](auto launch, bool write) {
    std::vector<float> ms;
    for (int r = 0; r < 25; ++r) {
      flush_l2(write);
      cudaEventRecord(e0);
      launch();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float t;
      cudaEventElapsedTime(&t, e0, e1);
      if (r >= 3) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  auto report = [&](const char* method, int ef, int stages, int splits, bool write, float ms) {
    std::printf(
        "{\"method\":\"%s\",\"evict_first\":%d,\"seqs\":%d,\"ctx\":%d,\"hkv\":%d,\"table\":\"%s\","
        "\"stages\":%d,\"splits\":%d,\"ctas\":%d,\"protocol\":\"%s\",\"us\":%.2f,\"TBps\":%.3f}\n",
        method, ef, seqs, ctx, hkv, shuffled ? "shuffled" : "identity", stages, splits,
        splits * seqs * hkv, write ? "write" : "clean", ms * 1e3, 2.0 * bytes / (ms * 1e-3) * 1e-12);
  };
  const std::vector<int> split_list = seqs == 1 ? std::vector<int>{32, 64} : std::vector<int>{1, 2};
  for (bool write : {true, false}) {
    report("empty", 0, 0, 0, write, time_it([&] { k_empty<<<1, 32>>>(); }, write));
    for (int splits : split_list) {
      Work w{k, v, table, splits, hkv, ctx, sink};
      const int grid = splits * seqs * hkv;
      report("ldcs", 1, 0, splits, write, time_it([&] { k_ldg<<<grid, 128>>>(w); }, write));
      for (int ef : {0, 1}) {
        auto run_s = [&](auto s_tag) {
          constexpr int S = decltype(s_tag)::value;
          const int smem = S * 2 * kRunB;
          CK(cudaFuncSetAttribute(k_cpasync<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
          CK(cudaFuncSetAttribute(k_bulk<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
          report("cpasync", ef, S, splits, write,
                 time_it([&] { k_cpasync<S><<<grid, 128, smem>>>(w, ef); }, write));
          report("bulk", ef, S, splits, write,
                 time_it([&] { k_bulk<S><<<grid, 128, smem>>>(w, ef); }, write));
          return 0;
        };
        run_s(std::integral_constant<int, 3>{});
        CK(cudaGetLastError());
      }
      // attnkit's copies (no hint), plain launch and with a streaming access-policy window over
      // K and V (one range here), hitRatio 1
      {
        constexpr int S = 3;
        const int smem = S * 2 * kRunB;
        CK(cudaFuncSetAttribute(k_cpasync_plain<S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                smem));
        report("cpasync_plain", 0, S, splits, write,
               time_it([&] { k_cpasync_plain<S><<<grid, 128, smem>>>(w); }, write));
        int max_window = 0;
        cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, 0);
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeAccessPolicyWindow;
        attr[0].val.accessPolicyWindow.base_ptr = k;
        attr[0].val.accessPolicyWindow.num_bytes = std::min<size_t>(2 * bytes, size_t(max_window));
        attr[0].val.accessPolicyWindow.hitRatio = 1.f;
        attr[0].val.accessPolicyWindow.hitProp = cudaAccessPropertyStreaming;
        attr[0].val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(grid);
        cfg.blockDim = dim3(128);
        cfg.dynamicSmemBytes = smem;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        cudaError_t le = cudaSuccess;
        const float t = time_it([&] { le = cudaLaunchKernelEx(&cfg, k_cpasync_plain<S>, w); }, write);
        CK(le);
        std::printf("{\"max_window\":%d,\"window_bytes\":%zu}\n", max_window,
                    size_t(attr[0].val.accessPolicyWindow.num_bytes));
        report("cpasync_window", 1, S, splits, write, t);
      }
    }
    for (int grid : {1056, 2112})
      report("read_contig", 0, 0, grid, write, time_it([&] {
               k_read<<<grid, 256>>>(reinterpret_cast<const uint4*>(k), 2 * bytes / 16, sink);
             }, write));
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
