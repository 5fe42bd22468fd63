// The wide-head form of the v2 kernels (head_qk or head_v over 256, e.g. 512). A warp's O
// accumulator for 16 rows x head_v would not fit its registers, so the four warps split the head
// dimension instead of the rows: warp w owns dims [w d/4, (w + 1) d/4) of Q.K^T and of V. Per key
// tile each warp computes the partial scores of its Q.K^T dims for all of the CTA's rows, the four
// partials meet in shared memory, and every warp adds them in the same order: all warps then hold
// bit-identical scores and softmax states (nothing to merge at the end), and each accumulates P.V
// for its quarter of V. Grid, GQA row packing, masking, score transforms, sinks, fp8 scale folding,
// LSE and the split-KV partials are flash_fwd_kernel's (flash_combine_kernel merges them as is).
// Tile sizes: tiles.hpp (kWideBlockM, kWideBlockN, kWideStages, wide_smem_bytes).
// kVInK (CUDA_MLA over the latent cache): V is the first kDv elements of each K row, so only K
// rows are copied (and, for fp8, dequantized) and P.V reads V out of the K tile. A warp's V dims
// then span K dims that other warps dequantized: the partial-score exchange's barrier separates
// that dequantization from P.V.
#pragma once

#include "backends/cuda_flash/flash_fwd.cuh"

namespace attnkit::cuda_flash {

template <int kDqk, int kDv, typename T, bool kFp8, bool kVInK = false>
__global__ void __launch_bounds__(kThreads) flash_wide_kernel(const FlashParams p) {
  constexpr int kBN = block_n(kDqk, kDv);
  constexpr int kBM = block_m(false, kDqk, kDv);
  constexpr int kMT = kBM / 16;                 // 16-row m-tiles; every warp holds all of them
  constexpr int kNT = kBN / 8;                  // n8 score tiles per m-tile
  constexpr int kWQ = kDqk / 4, kWV = kDv / 4;  // this warp's share of each head
  // Padded rows (tiles.hpp smem_row_bytes): this form's addressing was not moved to SmemRows'
  // swizzle (head 512 is outside the benchmark grid; v2n measured the others).
  using QRows = SmemRows<kDqk * 2, false>;   // Q and (fp8) the dequantized K
  using VRows16 = SmemRows<kDv * 2, false>;  // V as the tensor cores read it
  using KRaw = SmemRows<kDqk, false>;        // raw fp8 rows
  using VRaw = SmemRows<kDv, false>;
  using KRows = std::conditional_t<kFp8, KRaw, QRows>;  // the copied K and V rows
  using VRows = std::conditional_t<kFp8, VRaw, VRows16>;
  constexpr int kSQ = QRows::kStride / 2;  // elements
  constexpr int kSV = VRows16::kStride / 2;
  constexpr int kRawQK = KRaw::kStride;  // bytes
  constexpr int kRawV = VRaw::kStride;
  constexpr int kElemBytes = kFp8 ? 1 : 2;
  constexpr int kChunksK = kDqk * kElemBytes / 16;  // 16-byte chunks per row
  constexpr int kChunksV = kDv * kElemBytes / 16;
  constexpr int kStages = kWideStages;
  constexpr int kSlots = kStages + 1;  // block-table ring: tiles in flight plus one prefetched
  static_assert(is_wide(kDqk, kDv), "the wide form is for heads over 256");
  static_assert(kWQ % 16 == 0 && kWV % 16 == 0, "a warp's share of a head is a multiple of 16");
  static_assert(kBM % 16 == 0 && kBN % 16 == 0 && kBN <= kThreads, "tile shapes");
  static_assert(kStages >= 2, "the loop issues a tile while the previous one is read");
  static_assert(!kVInK || kDv <= kDqk, "V inside K rows needs head_v <= head_qk");
  using E = Elem<T>;
  // V as P.V reads it: its own rows, or the leading dims of the (dequantized) K rows.
  using VRead = std::conditional_t<kVInK, QRows, VRows16>;
  constexpr int kSVr = VRead::kStride / 2;

  // Shared memory: Q tile, the partial-score exchange, K/V stages, (fp8) the dequantized tile.
  constexpr int kQBytes = kBM * kSQ * 2;
  constexpr int kXBytes = 4 * kMT * kNT * 32 * 16;  // [warp][m-tile][n8 tile][lane] float4
  constexpr int kStageK = kFp8 ? kBN * kRawQK : kBN * kSQ * 2;  // bytes
  constexpr int kStageV = kVInK ? 0 : kFp8 ? kBN * kRawV : kBN * kSV * 2;
  constexpr int kSmem = flash_smem_bytes(kDqk, kDv, kFp8, false, kVInK);
  static_assert(kQBytes + kXBytes + kStages * (kStageK + kStageV) +
                        (kFp8 ? kBN * (kSQ + (kVInK ? 0 : kSV)) * 2 : 0) ==
                    kSmem,
                "the layout is the one tiles.hpp sizes");
  static_assert(kSmem + flash_static_smem_bytes(kDqk, kDv, kFp8, false) <= 166912,
                "fits SM80's opt-in shared memory per block (163 KiB)");
  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  float4* s_x = reinterpret_cast<float4*>(smem + kQBytes);
  unsigned char* stage_base = smem + kQBytes + kXBytes;
  auto sK_stage = [&](int s) { return stage_base + s * (kStageK + kStageV); };
  auto sV_stage = [&](int s) { return stage_base + s * (kStageK + kStageV) + kStageK; };
  T* sKc = reinterpret_cast<T*>(stage_base + kStages * (kStageK + kStageV));
  T* sVc = sKc + kBN * kSQ;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  pdl_launch_dependents();
  CtaWork w;
  if (!cta_work<kBM, kBN>(p, w)) return;
  const int kvh = w.kvh, split = w.split, q_start = w.q_start, rows = w.rows, row0 = w.row0;
  const int kv_len = w.kv_len, shift = w.shift, t_first = w.t_first, t_last = w.t_last;
  const int my_lo = w.my_lo, my_hi = w.my_hi, G = p.group;
  // m-tiles holding at least one row (CTA-uniform): decode rows (<= 16) skip the second's MMAs.
  const int live_mt = min(kMT, (rows - row0 + 15) / 16);

  const MaskPolicy mask{kv_len, p.window_left, p.window_right};
  const CtaScales cs = cta_scales(p, kvh);
  const LogitsPolicy& lp = cs.lp;
  const float v_scale = cs.v_scale;

  load_q_tile<kBM, kDqk, QRows>(p, w, sQ, tid);

  // The page ring (flash_fwd.cuh): tile t (counted from my_lo) uses slot t % kSlots and stage
  // t % kStages.
  __shared__ PageRing<kSlots, kBN> ring;
  auto load_kv = [&](int stage, int slot) {
    copy_rows<kBN, kChunksK, KRows>(sK_stage(stage), ring.k[slot], ring.rows[slot], tid);
    if constexpr (!kVInK)
      copy_rows<kBN, kChunksV, VRows>(sV_stage(stage), ring.v[slot], ring.rows[slot], tid);
  };

#pragma unroll
  for (int t = 0; t < kStages; ++t) {
    put_page(ring, t, page_of<kBN>(p, w, my_lo + t, tid), p, w, tid);
  }
  __syncthreads();
  // Prologue: tiles my_lo .. my_lo + kStages - 2 in flight (Q rides in the first group).
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if (my_lo + t < my_hi) load_kv(t, t);
    cp_async_commit();
  }

  // Per-thread row state, the same in every warp: rows g, g + 8 of m-tile mt (index 2 mt + i).
  constexpr int kR = 2 * kMT;
  const int g = lane / 4, tig = lane % 4;
  int qpos[kR];
  float m[kR], l[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int pr = row0 + (r / 2) * 16 + g + 8 * (r % 2);
    const bool ok = pr < rows;
    const int t = ok ? p.gdiv.div(pr) : 0;
    const int hd = kvh * G + (ok ? p.gdiv.mod(pr, t) : 0);
    qpos[r] = t + shift;
    m[r] = -INFINITY;
    l[r] = 0.f;
    // The sink is one more logit with no value, counted once per row state: split 0, one lane of
    // 4 (l is a per-thread partial sum until the epilogue). Every warp holds the whole row state.
    if (p.sinks && split == 0) {
      m[r] = p.sinks[hd] * kLog2e;
      l[r] = tig == 0 ? 1.f : 0.f;
    }
  }
  float o[kMT][kWV / 8][4];  // this warp's V dims: n8 tile j is dims warp * kWV + 8 j ..
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int j = 0; j < kWV / 8; ++j) o[mt][j][0] = o[mt][j][1] = o[mt][j][2] = o[mt][j][3] = 0.f;

  // ldmatrix lane addresses (the A / B fragment layouts of flash_fwd_kernel), offset to this
  // warp's dims. Q: rows lane % 16, dims + 8 for lanes 16..31.
  const uint32_t q_lane_addr = smem_addr(sQ + (lane & 15) * kSQ + warp * kWQ + (lane >> 4) * 8);
  const bool fold_scale = cs.fold_scale;  // the scale rides in exp2's argument (one FFMA)
  const float sc = fold_scale ? lp.scale_log2 : 1.f;

  // Rows' extreme positions decide which tiles need the mask at all.
  const int p_min = t_first + shift, p_max = t_last + shift;

  for (int nb = my_lo; nb < my_hi; ++nb) {
    const int it = nb - my_lo;
    const int stage = it % kStages;
    // rows of tile nb + kStages, stored once the barrier frees their slot
    const PageRows pf = page_of<kBN>(p, w, nb + kStages, tid);
    // Groups committed so far: kStages - 1 + it; tile nb is group it.
    cp_async_wait<kStages - 2>();
    // Tile nb is visible to every thread, and every warp is done with iteration nb - 1: its
    // stage, the exchange buffer and the dequantized tile may be overwritten from here on.
    __syncthreads();
    // Issue tile nb + kStages - 1 into the stage tile nb - 1 used; an empty group near the end
    // keeps the count uniform. Its ring slot was filled before this barrier.
    if (nb + kStages - 1 < my_hi)
      load_kv((it + kStages - 1) % kStages, (it + kStages - 1) % kSlots);
    cp_async_commit();
    // Slot of tile nb + kStages: it last held tile nb - 1, copied kStages - 1 iterations ago.
    put_page(ring, (it + kStages) % kSlots, pf, p, w, tid);

    const T* sK;
    const T* sV;
    if constexpr (kFp8) {
      // Each warp dequantizes only its own dims of K and V, which only it reads: a warp barrier
      // suffices. Scales are folded elsewhere (k_scale into the logits, v_scale into the output).
      const bool e5m2 = p.kv_e5m2 != 0;
      // kChunks 16-element chunks per row of this warp's dims, raw rows kRaw bytes apart.
      auto dequant_tile = [&]<int kChunks, int kRaw, int kDst>(const unsigned char* raw, T* dst) {
#pragma unroll
        for (int i = 0; i < (kBN * kChunks + 31) / 32; ++i) {
          const int c = lane + i * 32;
          if (c < kBN * kChunks)
            dequant16(raw + (c / kChunks) * kRaw + (c % kChunks) * 16,
                      dst + (c / kChunks) * kDst + (c % kChunks) * 16,
                      dst + (c / kChunks) * kDst + (c % kChunks) * 16 + 8, e5m2);
        }
      };
      dequant_tile.template operator()<kWQ / 16, kRawQK, kSQ>(sK_stage(stage) + warp * kWQ,
                                                              sKc + warp * kWQ);
      if constexpr (!kVInK)
        dequant_tile.template operator()<kWV / 16, kRawV, kSV>(sV_stage(stage) + warp * kWV,
                                                               sVc + warp * kWV);
      __syncwarp();
      sK = sKc;
      sV = kVInK ? sKc : sVc;
    } else {
      sK = reinterpret_cast<const T*>(sK_stage(stage));
      sV = kVInK ? sK : reinterpret_cast<const T*>(sV_stage(stage));
    }

    // Partial scores over this warp's Q.K^T dims. K: keys lane % 8 (+ 8 for lanes 16..31), dims
    // + 8 for lanes 8..15 and 24..31: registers 0, 1 are the B fragment of n8 tile 2 nn, 2, 3 of
    // tile 2 nn + 1.
    float s[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int j = 0; j < kNT; ++j) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.f;
    const uint32_t k_lane_addr = smem_addr(sK + ((lane & 7) + ((lane >> 4) << 3)) * kSQ +
                                           warp * kWQ + ((lane >> 3) & 1) * 8);
#pragma unroll
    for (int kk = 0; kk < kWQ / 16; ++kk) {
      uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
        if (mt < live_mt) ldsm_x4(a[mt], q_lane_addr + (mt * 16 * kSQ + kk * 16) * 2);
#pragma unroll
      for (int nn = 0; nn < kBN / 16; ++nn) {
        uint32_t b[4];
        ldsm_x4(b, k_lane_addr + (nn * 16 * kSQ + kk * 16) * 2);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          if (mt < live_mt) {
            E::mma(s[mt][2 * nn], a[mt], b[0], b[1]);
            E::mma(s[mt][2 * nn + 1], a[mt], b[2], b[3]);
          }
        }
      }
    }

    // Full scores: the four warps' partials, added in warp order by everyone. The accumulator
    // layout is the same in every warp, so each thread reads the entries it holds itself.
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int j = 0; j < kNT; ++j)
        if (mt < live_mt)
          s_x[((warp * kMT + mt) * kNT + j) * 32 + lane] =
              make_float4(s[mt][j][0], s[mt][j][1], s[mt][j][2], s[mt][j][3]);
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int j = 0; j < kNT; ++j) {
        if (mt < live_mt) {
          float4 acc = s_x[(mt * kNT + j) * 32 + lane];
#pragma unroll
          for (int w = 1; w < 4; ++w) {
            const float4 x = s_x[((w * kMT + mt) * kNT + j) * 32 + lane];
            acc.x += x.x;
            acc.y += x.y;
            acc.z += x.z;
            acc.w += x.w;
          }
          s[mt][j][0] = acc.x;
          s[mt][j][1] = acc.y;
          s[mt][j][2] = acc.z;
          s[mt][j][3] = acc.w;
        }
      }

    // Scores to log2 units (the fast path leaves them raw: `sc` scales inside exp2); the mask
    // only where the tile crosses the visible band's edge. Accumulator element e of n8 tile j:
    // row g + 8 (e / 2) of its m-tile, key n0 + 8 j + 2 tig + e % 2.
    const int n0 = nb * kBN;
    const bool need_mask =
        n0 + kBN > kv_len || n0 + kBN - 1 > p_min + p.window_right || n0 < p_max - p.window_left;
    if (!fold_scale) {
      // ALiBi slopes are re-read here (L1-resident) rather than held in registers across the loop.
      float slope[kR];
#pragma unroll
      for (int r = 0; r < kR; ++r) {
        const int pr = row0 + (r / 2) * 16 + g + 8 * (r % 2);
        slope[r] = p.alibi ? p.alibi[kvh * G + (pr < rows ? p.gdiv.rem(pr) : 0)] : 0.f;
      }
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int j = 0; j < kNT; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            s[mt][j][e] = lp.to_log2(s[mt][j][e], slope[2 * mt + e / 2],
                                     n0 + j * 8 + 2 * tig + (e & 1), qpos[2 * mt + e / 2]);
    }
    if (need_mask) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int j = 0; j < kNT; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (!mask.visible(n0 + j * 8 + 2 * tig + (e & 1), qpos[2 * mt + e / 2]))
              s[mt][j][e] = -INFINITY;
    }
    online_softmax(s, o, m, l, sc);

    // O += P V over this warp's V dims: the S accumulators of two n8 tiles form one k16 A
    // fragment. V (transposed): keys lane % 8 (+ 8 for lanes 8..15 and 24..31), dims + 8 for
    // lanes 16..31: registers 0, 1 are the B fragment of dims 16 dn .. + 7, 2, 3 of + 8 .. + 15.
    const uint32_t v_lane_addr =
        smem_addr(sV + ((lane & 7) + ((lane >> 3) & 1) * 8) * kSVr + warp * kWV + (lane >> 4) * 8);
    pv_mma<E, VRead>(o, s, v_lane_addr, live_mt);
  }
  cp_async_wait<0>();  // a CTA with no key tiles still has its Q copy in flight

  // ---- epilogue: each warp writes its V dims; warp 0 writes the LSE ----
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int mt = r / 2, i = r % 2;
    const int pr = row0 + mt * 16 + g + 8 * i;
    if (pr >= rows) continue;
    const float f = (l[r] > 0.f ? 1.f / l[r] : 0.f) * v_scale;  // 0 for rows that saw no key
    const float lse = row_lse(m[r], l[r]);
    const int t = p.gdiv.div(pr), tok = q_start + t, h = kvh * G + p.gdiv.mod(pr, t);
    if (p.num_splits == 1) {
      T* out = static_cast<T*>(p.out) + tok * p.o_stride_token + h * p.o_stride_head + warp * kWV;
#pragma unroll
      for (int j = 0; j < kWV / 8; ++j)
        *reinterpret_cast<uint32_t*>(out + j * 8 + 2 * tig) =
            E::pack(o[mt][j][2 * i] * f, o[mt][j][2 * i + 1] * f);
      if (p.lse && warp == 0 && tig == 0) p.lse[int64_t(tok) * p.num_heads + h] = lse;
    } else {
      const int64_t row = (int64_t(split) * p.total_q_capacity + tok) * p.num_heads + h;
      float* out = p.ws_o + row * kDv + warp * kWV;
#pragma unroll
      for (int j = 0; j < kWV / 8; ++j)
        *reinterpret_cast<float2*>(out + j * 8 + 2 * tig) =
            make_float2(o[mt][j][2 * i] * f, o[mt][j][2 * i + 1] * f);
      if (warp == 0 && tig == 0) p.ws_lse[row] = lse;
    }
  }
}

}  // namespace attnkit::cuda_flash
