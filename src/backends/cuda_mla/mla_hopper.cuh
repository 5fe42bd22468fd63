// CUDA_MLA's Hopper form (sm_90a): MLA over the latent cache with wgmma. One CTA = 64 packed rows
// (query token x head) and a range of 64-key tiles; two warpgroups. Warpgroup w computes the
// scores of keys 32 w .. 32 w + 31, S = Q K^T with Q and K as shared-memory operands (36 k16
// steps over 576 dims); the two exchange their row maxima (both then hold the same running max),
// write their probabilities into one shared 64 x 64 P tile, and each accumulates P V for its half
// of the 512 V dims, P and V both from shared memory, V read out of the same K tile (the latent
// rows' first 512 elements). Row sums are added across the warpgroups at the end. (Each
// warpgroup computing all of S instead, P from registers, ran 4-11% slower: 53% more tensor work
// against two fewer barriers per tile; results/cuda_s13_r4_*.) Tiles in shared memory use the
// 128-byte swizzle of wgmma's canonical layouts: 64-element column blocks of 64 rows x 128 bytes,
// 16-byte chunk j of row r at j ^ (r % 8). Rows past seqused_k are zero-filled, never read.
// Handles plain logits (no softcap, ALiBi or sinks: CUDA_MLA declares none, and the launcher
// sends such calls to the wide form); masks, splits, fp8 scales and partials as flash_wide.cuh.
#pragma once

#include "backends/cuda_flash/flash_fwd.cuh"
#include "backends/cuda_flash/gmma.cuh"
#include "backends/cuda_mla/mla_tiles.hpp"

namespace attnkit::cuda_mla {

using namespace cuda_flash;

// Byte offset of 16-byte chunk j (of 72) of row r in a swizzled 64-row tile.
__device__ __forceinline__ uint32_t sw_chunk(int r, int j) {
  return uint32_t(GmmaRows<kColBytes>::at(r, j));
}

// kRagged: under a ragged plan (a split count per sequence, flash_fwd.cuh ragged_item), its own
// instantiation as CUDA_FLASH's decode form's.
template <typename T, bool kFp8, bool kRagged = false>
__global__ void __launch_bounds__(kHopperThreads, 1) mla_hopper_kernel(const FlashParams p) {
#if defined(ATTNKIT_GMMA_BODY)
  using E = Elem<T>;
  constexpr int kBM = kHopperRows, kBN = kHopperKeys;
  constexpr int kChunks = kLatent * (kFp8 ? 1 : 2) / 16;  // 16-byte chunks of a cache row
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* sQ = smem;
  unsigned char* stage_base = smem + kTileBytes;
  constexpr int kStageBytes = kFp8 ? kRawBytes : kTileBytes;
  unsigned char* sKc = stage_base + 2 * kStageBytes;  // fp8: the dequantized tile
  unsigned char* sP = stage_base + (kFp8 ? 2 * kRawBytes + kTileBytes : 2 * kTileBytes);
  float* sX = reinterpret_cast<float*>(sP + kPTileBytes);  // [what][wg][row]
  // Rows of tiles it, it + 1, it + 2 (slot t % 3), filled one iteration ahead: offsets from the
  // KV head's base in 16-byte units (the cache's byte strides are multiples of 16).
  __shared__ uint32_t ring[3][kBN];
  __shared__ int ring_rows[3];

  const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, wq = (tid % 128) / 32;
  CtaWork w;
  if (!cta_work<kBM, kBN, kRagged, kHopperThreads>(p, w)) return;
  const int G = p.group;

  // Tile nb's ring entry: this thread's row (tid < kBN) as an offset from the KV head's base,
  // and the tile's row count.
  struct RingEntry {
    int64_t row;
    int n;
  };
  auto ring_entry = [&](int nb) {
    RingEntry e{0, nb < w.my_hi ? min(kBN, max(0, w.kv_len - nb * kBN)) : 0};
    if (tid < e.n) {
      const int tok = nb * kBN + tid, b = p.bdiv.div(tok);
      const int blk = p.block_table[int64_t(w.seq) * p.block_table_stride + b];
      e.row = blk * p.k_stride_block + p.bdiv.mod(tok, b) * p.k_stride_token;
    }
    return e;
  };
  auto put_ring = [&](int slot, const RingEntry& e) {
    if (tid < kBN) ring[slot][tid] = uint32_t(e.row >> 4);
    if (tid == 0) ring_rows[slot] = e.n;
  };
  auto fill_ring = [&](int slot, int nb) { put_ring(slot, ring_entry(nb)); };
  // A programmatic dependent of the stream's previous kernel (SM90, as CUDA_FLASH's decode form,
  // pdl.cuh): the metadata and the first two tiles' block-table entries are requested before the
  // wait, everything else read after it.
  const RingEntry first[2] = {ring_entry(w.my_lo), ring_entry(w.my_lo + 1)};
  pdl_wait_primary();
  pdl_launch_dependents();

  const char* k_base = p.k + w.kvh * p.k_stride_head;
  auto load_k = [&](int stage, int slot) {
    unsigned char* dst = stage_base + stage * kStageBytes;
    const int n = ring_rows[slot];
    // tid through an opaque move: the chunk offsets below are loop-invariant, and kept in
    // registers across the key loop they pushed the 16-bit kernel past 255 (a 24-byte spill).
    int tid_k;
    asm volatile("mov.b32 %0, %1;\n" : "=r"(tid_k) : "r"(tid));
#pragma unroll
    for (int i = 0; i < kBN * kChunks / kHopperThreads; ++i) {
      const int c = tid_k + i * kHopperThreads, r = c / kChunks, j = c % kChunks;
      const uint32_t off = kFp8 ? uint32_t(r * kLatent + j * 16) : sw_chunk(r, j);
      cp_async16(smem_addr(dst + off), k_base + int64_t(ring[slot][r]) * 16 + j * 16, r < n);
    }
  };

  // Q rows (zeros past the CTA's rows) ride in the first group.
  {
    const T* q = static_cast<const T*>(p.q);
    for (int c = tid; c < kBM * (kLatent / 8); c += kHopperThreads) {
      const int r = c / (kLatent / 8), j = c % (kLatent / 8), pr = w.row0 + r;
      const bool ok = pr < w.rows;
      const T* src = q;
      if (ok) {
        const int t = p.gdiv.div(pr);
        src += (w.q_start + t) * p.q_stride_token +
               (w.kvh * G + p.gdiv.mod(pr, t)) * p.q_stride_head + j * 8;
      }
      cp_async16(smem_addr(sQ + sw_chunk(r, j)), src, ok);
    }
  }
  put_ring(0, first[0]);
  put_ring(1, first[1]);
  __syncthreads();
  load_k(0, 0);
  cp_async_commit();
  load_k(1, 1);
  cp_async_commit();
  // The fp8 scales only now, as in CUDA_FLASH's forms: read before the first copies, their product
  // with the softmax scale held every thread for a load's latency before it asked for a tile.
  const CtaScales cs = cta_scales(p, w.kvh);
  const float sc = cs.lp.scale_log2;  // plain logits: the scale rides in exp2's argument

  // This thread's rows: r0 = 16 wq + lane / 4 and r0 + 8 of the CTA's 64.
  const int g = lane / 4, tig = lane % 4;
  int qpos[2];
  float m[2], l[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int pr = w.row0 + 16 * wq + g + 8 * i;
    qpos[i] = (pr < w.rows ? p.gdiv.div(pr) : 0) + w.shift;
    m[i] = -INFINITY;
    l[i] = 0.f;
  }
  float o[1][32][4];
#pragma unroll
  for (int j = 0; j < 32; ++j) o[0][j][0] = o[0][j][1] = o[0][j][2] = o[0][j][3] = 0.f;
  const MaskPolicy mask{w.kv_len, p.window_left, p.window_right};
  const int p_min = w.t_first + w.shift, p_max = w.t_last + w.shift;
  const uint32_t q_addr = smem_addr(sQ);

  for (int nb = w.my_lo; nb < w.my_hi; ++nb) {
    const int it = nb - w.my_lo, stage = it & 1;
    fill_ring((it + 2) % 3, nb + 2);  // read after the barrier at the end of this iteration
    cp_async_wait<1>();               // tile nb has landed (for this thread)
    if constexpr (kFp8) {
      __syncthreads();
      const unsigned char* raw = stage_base + stage * kStageBytes;
      const bool e5m2 = p.kv_e5m2 != 0;
      for (int c = tid; c < kBN * kLatent / 16; c += kHopperThreads) {
        const int r = c / (kLatent / 16), j = c % (kLatent / 16);
        dequant16(raw + r * kLatent + j * 16, reinterpret_cast<T*>(sKc + sw_chunk(r, 2 * j)),
                  reinterpret_cast<T*>(sKc + sw_chunk(r, 2 * j + 1)), e5m2);
      }
    }
    // The copies (generic proxy) are read by wgmma (async proxy).
    fence_proxy_async();
    __syncthreads();
    const uint32_t k_addr = smem_addr(kFp8 ? sKc : stage_base + stage * kStageBytes);

    // S over this warpgroup's keys 32 wg .. 32 wg + 31.
    constexpr int kNT = 4;
    const int key0 = 32 * wg;
    float s[1][kNT][4];
    const GmmaDesc qd(q_addr, 16, 1024), kd(k_addr + key0 * 128, 16, 1024);
    gmma_arrive();
#pragma unroll
    for (int kk = 0; kk < kLatent / 16; ++kk) {
      const uint32_t col = (kk >> 2) * kColBytes + (kk & 3) * 32;
      Gmma<T, 32>::ss(&s[0][0][0], qd.at(col), kd.at(col), kk > 0);
    }
    gmma_commit();
    gmma_wait<0>();

    const int n0 = nb * kBN;
    if (n0 + kBN > w.kv_len || n0 + kBN - 1 > p_min + p.window_right ||
        n0 < p_max - p.window_left) {
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (!mask.visible(n0 + key0 + 8 * j + 2 * tig + (e & 1), qpos[e / 2]))
            s[0][j][e] = -INFINITY;
    }
    // The tile's row maxima over both halves (the same running max in both warpgroups), then
    // this half's probabilities into the shared P tile (K-major, swizzled).
    online_softmax(s, o, m, l, sc, [&](float(&mx)[2]) {
      if (tig == 0)
        for (int i = 0; i < 2; ++i) sX[wg * kBM + 16 * wq + g + 8 * i] = mx[i];
      __syncthreads();
      for (int i = 0; i < 2; ++i) mx[i] = fmaxf(mx[i], sX[(1 - wg) * kBM + 16 * wq + g + 8 * i]);
    });
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = 16 * wq + g + 8 * i, chunk = 4 * wg + j;
        *reinterpret_cast<uint32_t*>(sP + r * 128 + ((chunk ^ (r & 7)) << 4) + 4 * tig) =
            E::pack(s[0][j][2 * i], s[0][j][2 * i + 1]);
      }
    fence_proxy_async();
    __syncthreads();
    // O += P V over this warpgroup's 256 V dims (column blocks 4 wg .. 4 wg + 3).
    const GmmaDesc pd(smem_addr(sP), 16, 1024), vd(k_addr + 4 * wg * kColBytes, kColBytes, 1024);
    gmma_arrive();
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk)
      Gmma<T, 256>::ss_t(&o[0][0][0], pd.at(kk * 32), vd.at(kk * 16 * 128));
    gmma_commit();
    gmma_wait<0>();
    __syncthreads();  // the stage and the ring slot of tile nb + 2 are free / filled
    if (nb + 2 < w.my_hi) load_k(stage, (it + 2) % 3);
    cp_async_commit();
  }
  cp_async_wait<0>();

  // ---- epilogue: each warpgroup writes its 256 V dims; warpgroup 0 the LSE ----
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
  }
  {  // each warpgroup summed its half of the keys
    float* sl = sX + 2 * kBM;
    if (tig == 0)
      for (int i = 0; i < 2; ++i) sl[wg * kBM + 16 * wq + g + 8 * i] = l[i];
    __syncthreads();
    for (int i = 0; i < 2; ++i) l[i] += sl[(1 - wg) * kBM + 16 * wq + g + 8 * i];
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int pr = w.row0 + 16 * wq + g + 8 * i;
    if (pr >= w.rows) continue;
    const float f = (l[i] > 0.f ? 1.f / l[i] : 0.f) * cs.v_scale;  // 0 for rows that saw no key
    const float lse = row_lse(m[i], l[i]);
    const int t = p.gdiv.div(pr), tok = w.q_start + t, h = w.kvh * G + p.gdiv.mod(pr, t);
    const int d0 = wg * (kLatentV / 2) + 2 * tig;
    const int nsplit = kRagged ? ragged_slots()[2] : p.num_splits;
    // A ragged plan's combine learns each token's split count here (one writer per token).
    if (kRagged && w.split == 0 && h == 0 && wg == 0 && tig == 0) p.ws_nsplit[tok] = nsplit;
    if (nsplit == 1) {
      T* out = static_cast<T*>(p.out) + tok * p.o_stride_token + h * p.o_stride_head + d0;
#pragma unroll
      for (int j = 0; j < 32; ++j)
        *reinterpret_cast<uint32_t*>(out + 8 * j) =
            E::pack(o[0][j][2 * i] * f, o[0][j][2 * i + 1] * f);
      if (p.lse && wg == 0 && tig == 0) p.lse[int64_t(tok) * p.num_heads + h] = lse;
    } else {
      const int64_t row = (int64_t(w.split) * p.total_q_capacity + tok) * p.num_heads + h;
      float* out = p.ws_o + row * kLatentV + d0;
#pragma unroll
      for (int j = 0; j < 32; ++j)
        *reinterpret_cast<float2*>(out + 8 * j) =
            make_float2(o[0][j][2 * i] * f, o[0][j][2 * i + 1] * f);
      if (wg == 0 && tig == 0) p.ws_lse[row] = lse;
    }
  }
#else
  __trap();  // built for sm_90a only; the launcher never picks this form elsewhere
#endif
}

}  // namespace attnkit::cuda_mla
