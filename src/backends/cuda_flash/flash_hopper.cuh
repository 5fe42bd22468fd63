// CUDA_FLASH v3's prefill form (sm_90a): paged, varlen, GQA-packed flash attention on wgmma for
// 16-bit and fp8 caches at heads 64 to 256, qk and v (tiles.hpp hopper_prefill_head). One CTA = 128
// packed rows (query token x query head of one KV head) and a range of key tiles, in three
// warpgroups:
// - warpgroup 0 produces: it copies Q once and each tile's K and V rows (cp.async through v2's
//   page ring) into two stages, 128-byte swizzled (gmma.cuh), and each copy's completion arrives
//   on that stage's K or V barrier (mbarrier). fp8 rows land raw in a ring of their own first;
//   each thread converts the chunks it copied to fp16 in the stage (exactly) and then arrives,
//   and the MMAs run on fp16 (a bf16 model's Q rows too: q_rows_to_half);
// - warpgroups 1 and 2 consume, 64 rows each: S = Q K^T (Q and K from shared memory), the softmax
//   in registers (v2's softmax step, masks and logits transforms), O += P V with P as a register
//   operand and V read MN-major from shared memory, releasing each K and V once read.
// Each consumer issues S of tile t + 1, then P V of tile t, and starts tile t + 1's softmax under
// that P V; the two also take turns at the tensor cores (ping-pong), so each one's softmax runs
// under the other's MMAs as well. The producer copies K a tile ahead of V, and its registers go
// to the consumers (setmaxnreg). Split partials and the LSE as the v2 forms; the combine kernel
// merges splits.
#pragma once

#include <type_traits>

#include "backends/cuda_flash/flash_fwd.cuh"
#include "backends/cuda_flash/gmma.cuh"

namespace attnkit::cuda_flash {

// Rows of kRowBytes, unpadded: the fp8 raw ring, where each thread reads back only the chunks it
// copied (a warp's 32 chunks are 512 contiguous bytes, free of bank conflicts).
template <int kRowBytes>
struct PackedRows {
  __device__ __forceinline__ static constexpr int at(int r, int c) {
    return r * kRowBytes + c * 16;
  }
};

// The fp8 producer's map of a raw tile of rows kRowBytes apart (the raw ring's: K's row, the
// wider), of which it copies kW bytes (a K row of head_qk, a V row of head_v): thread wtid copies,
// then converts into the stage, raw chunk cc of rows r0 + kRowStep r, kLanes threads a row (K's
// chunks rounded up to a power of two, lanes past a row's chunks idle: heads 80, 96, 160, 192,
// 224, V of 192/128), so that it converts exactly what it copied and waits on its own copies
// only. K and V items take the same lanes (V's a subset), so the bytes a thread's copy overwrites
// in a reused raw slot are bytes only it read there (with a map per width, racecheck found each
// thread's V copies landing on chunks other threads still converted as K: s61 call 6). Its rows
// share their swizzle in the stage, so each one's offset there is the first's plus an immediate
// (with GmmaRows::at per row ptxas kept a register per row and chunk).
template <int kRowBytes, int kW, int kBN, typename StageRows>
struct RawRowMap {
  static constexpr int kRawChunks = kW / 16, kLanes = pow2_at_least(kRowBytes / 16);
  static constexpr int kRowStep = 128 / kLanes, kIters = kBN / kRowStep;
  static_assert(kW <= kRowBytes, "a row's bytes fit the raw row");
  static_assert(kThreads == 128 && kRowStep % 8 == 0 && kBN % kRowStep == 0,
                "a thread's rows are a multiple of eight apart, evenly many a tile");
  int cc, r0, raw_off, off_lo, off_hi;
  bool on;
  __device__ __forceinline__ explicit RawRowMap(int wtid)
      : cc(wtid % kLanes),
        r0(wtid / kLanes),
        raw_off(PackedRows<kRowBytes>::at(r0, cc)),
        off_lo(StageRows::at(r0, 2 * cc)),
        off_hi(StageRows::at(r0, 2 * cc + 1)),
        on(kLanes == kRawChunks || cc < kRawChunks) {}
  // Issues this thread's copies of a tile (rows from n_valid on zero-filled), every row address
  // read before any copy is issued.
  __device__ __forceinline__ void copy(unsigned char* raw, const char* const* rows,
                                       int n_valid) const {
    if (!on) return;
    const char* src[kIters];
#pragma unroll
    for (int r = 0; r < kIters; ++r) src[r] = rows[r0 + kRowStep * r];
    const uint32_t d = smem_addr(raw + raw_off);
#pragma unroll
    for (int r = 0; r < kIters; ++r)
      cp_async16(d + kRowStep * kRowBytes * r, src[r] + cc * 16, r0 + kRowStep * r < n_valid);
  }
#if defined(ATTNKIT_GMMA_BODY)
  // This thread's chunks of a landed raw tile into the stage tile dst as M pairs. Every chunk is
  // loaded before any is stored (the stores to the stage would otherwise hold each load behind
  // the previous chunk's conversion), and each code format has its own loop (one predicated on
  // the format issued both). No proxy fence: each consumer fences after its wait on the full
  // barrier, before wgmma reads the stage (as for the 16-bit form's cp.async rows); here it
  // drained this thread's stores (s17 r1: +3-7%).
  template <typename M>
  __device__ __forceinline__ void convert(const unsigned char* raw, unsigned char* dst,
                                          bool e5m2) const {
    if (!on) return;
    uint4 w[kIters];
#pragma unroll
    for (int r = 0; r < kIters; ++r)
      w[r] = *reinterpret_cast<const uint4*>(raw + raw_off + kRowStep * kRowBytes * r);
    auto store = [&](bool fmt_e5m2) {
#pragma unroll
      for (int r = 0; r < kIters; ++r)
        dequant16(w[r], reinterpret_cast<M*>(dst + off_lo + kRowStep * 128 * r),
                  reinterpret_cast<M*>(dst + off_hi + kRowStep * 128 * r), fmt_e5m2);
    };
    if (e5m2)
      store(true);
    else
      store(false);
  }
#endif
};

#if defined(ATTNKIT_GMMA_BODY)
// A bf16 model over an fp8 cache runs its MMAs on fp16 operands (a pair of fp8 codes becomes
// fp16 in one instruction, bf16 in four). Each consumer warp converts its 16 Q rows in place, times
// 2^-k with k such that their largest magnitude lands in [2^15, 2^16): every element down to 2^-29
// of that magnitude is then exact in fp16 (smaller ones round to its subnormal grid, far below the
// products' rounding), and the logits' scale takes 2^k, which this returns. All-zero and
// non-finite rows keep k = 0 (NaN and infinity convert as themselves).
template <int kD, typename Rows>
__device__ __forceinline__ float q_rows_to_half(unsigned char* sQ, int r0, int lane) {
  constexpr int kChunks = kD / 8, kIters = 16 * kChunks / 32;
  static_assert(16 * kChunks % 32 == 0, "the warp's rows are whole steps of its lanes");
  auto at = [&](int i) {
    return sQ + Rows::at(r0 + (lane + 32 * i) / kChunks, (lane + 32 * i) % kChunks);
  };
  uint4 q[kIters];
  uint32_t big = 0;  // the largest bf16 magnitude (as bits; NaN above infinity above finite)
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    q[i] = *reinterpret_cast<const uint4*>(at(i));
    const uint32_t words[4] = {q[i].x, q[i].y, q[i].z, q[i].w};
#pragma unroll
    for (uint32_t x : words) big = max(big, max(x & 0x7FFFu, (x >> 16) & 0x7FFFu));
  }
  big = __reduce_max_sync(0xffffffffu, big);
  const int e = int(big >> 7);  // biased exponent of the largest magnitude
  const int k = big < 0x7F80u && e > 0 ? max(e - (127 + 15), -100) : 0;
  const float down = __uint_as_float(uint32_t(127 - k) << 23);
  auto half2_of = [&](uint32_t x) {
    const __half2 h =
        __floats2half2_rn(__uint_as_float(x << 16) * down, __uint_as_float(x & 0xFFFF0000u) * down);
    return *reinterpret_cast<const uint32_t*>(&h);
  };
#pragma unroll
  for (int i = 0; i < kIters; ++i)
    *reinterpret_cast<uint4*>(at(i)) =
        make_uint4(half2_of(q[i].x), half2_of(q[i].y), half2_of(q[i].z), half2_of(q[i].w));
  fence_proxy_async();  // read by wgmma after the turn barrier
  return __uint_as_float(uint32_t(127 + k) << 23);
}
#endif

// kMm: PrefixLM ranges (p.mm_offsets), an instantiation of its own as in flash_fwd_kernel.
// kD, kDv: the Q/K and V head sizes.
template <int kD, int kDv, typename T, bool kFp8, bool kMm = false>
__global__ void __launch_bounds__(kHopperPrefillThreads, 1)
    flash_hopper_kernel(const FlashParams p) {
#if defined(ATTNKIT_GMMA_BODY)
  using E = Elem<T>;
  // The MMAs' operand type: fp16 over fp8 caches (q_rows_to_half), else the model's.
  using M = std::conditional_t<kFp8, __half, T>;
  constexpr bool kQToHalf = kFp8 && !std::is_same_v<T, __half>;
  constexpr int kBM = kHopperPrefillRows, kBN = hopper_prefill_tile_keys(kD, kDv);
  // The tiles' widths (whole column blocks) and 16-byte chunks of a Q / K and of a V / O row.
  constexpr int kDL = hopper_layout_head(kD), kDvL = hopper_layout_head(kDv);
  constexpr int kChunks = kD / 8, kChunksV = kDv / 8;
  constexpr int kQCol = kBM * 128, kKCol = kBN * 128;  // bytes of a 64-element column block
  constexpr int kTileK = kBN * kDL * 2, kTileV = kBN * kDvL * 2, kStage = kTileK + kTileV;
  static_assert(kDvL <= kDL, "O leaves through Q's tile");
  using QRows = GmmaRows<kQCol>;
  using KRows = GmmaRows<kKCol>;
  static_assert(kHopperPrefillStages == 2, "a tile's stage is its index's parity");
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* sQ = smem;
  unsigned char* stage_base = smem + kBM * kDL * 2;  // stage s: K tile, then V tile
  __shared__ PageRing<4, kBN> ring;                  // the producer's: tile t in slot t % 4
  // Barriers: Q landed; stage s's K / V landed; stage s's K / V released by both consumers.
  __shared__ __align__(8) uint64_t q_full, k_full[2], v_full[2], k_empty[2], v_empty[2];
  static_assert(sizeof(ring) + 9 * sizeof(uint64_t) <= hopper_prefill_static_smem_bytes(kD, kDv),
                "the plan's static shared-memory figure covers the ring and the barriers");

  // The warpgroup index through a shuffle: visibly warp-uniform, so that ptxas allocates each
  // role's registers to its setmaxnreg budget (with tid / 128 it kept the launch's 168 for every
  // role and spilled the consumers).
  const int tid = threadIdx.x, wtid = tid % 128, lane = tid % 32;
  const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
  CtaWork w;
  if (!cta_work<kBM, kBN, false, kHopperPrefillThreads, kMm>(p, w)) return;
  const int n = w.my_hi - w.my_lo;  // key tiles of this CTA
  if (tid == 0) {
    mbar_init(&q_full, 128);
    for (int s = 0; s < 2; ++s) {
      mbar_init(&k_full[s], 128);
      mbar_init(&v_full[s], 128);
      mbar_init(&k_empty[s], 256);
      mbar_init(&v_empty[s], 256);
    }
  }
  __syncthreads();

  if (wg == 0) {  // ---- producer ----
    regs_dec<kHopperProducerRegs>();
    load_q_tile<kBM, kD, QRows>(p, w, reinterpret_cast<T*>(sQ), wtid);
    mbar_arrive_cp_async(&q_full);
    auto page_of = [&](int it) { return cuda_flash::page_of<kBN>(p, w, w.my_lo + it, wtid); };
    auto put_page = [&](int it, const PageRows& r) {
      cuda_flash::put_page(ring, it % 4, r, p, w, wtid);
    };
    put_page(0, page_of(0));
    put_page(1, page_of(1));
    named_barrier(1, 128);
    if constexpr (kFp8) {
      // Raw items, converted in issue order: K of tile 0, then per step j >= 1 K of tile j and V
      // of tile j - 1 (item i: K of tile 0 or (i + 1) / 2 when i is 0 or odd, else V of tile
      // i / 2 - 1), item i in raw slot i % kSlots. Before converting item i a thread issues item
      // i + kAhead and waits for its own copies of item i (kAhead later items stay in flight);
      // the stage is released as in the 16-bit steps below.
      constexpr int kRawTile = kBN * kD;  // K rows, the wider
      constexpr int kSlots = hopper_raw_slots(kD, kDv), kAhead = kSlots - 1;
      unsigned char* raw = stage_base + kHopperPrefillStages * kStage;
      const bool e5m2 = p.kv_e5m2;
      const RawRowMap<kD, kD, kBN, KRows> mk(wtid);
      const RawRowMap<kD, kDv, kBN, KRows> mv(wtid);
      auto issue = [&](int i) {  // an empty group past the last tile keeps the count uniform
        const int t = i == 0 ? 0 : (i & 1) ? (i + 1) / 2 : i / 2 - 1;
        if (t < n) {
          const int slot = t % 4;
          const bool v = i >= 2 && !(i & 1);
          unsigned char* dst = raw + i % kSlots * kRawTile;
          if constexpr (kD == kDv)
            mk.copy(dst, v ? ring.v[slot] : ring.k[slot], ring.rows[slot]);
          else if (v)
            mv.copy(dst, ring.v[slot], ring.rows[slot]);
          else
            mk.copy(dst, ring.k[slot], ring.rows[slot]);
        }
        cp_async_commit();
      };
      auto raw_item = [&](int i) {
        cp_async_wait<kAhead>();
        return raw + i % kSlots * kRawTile;
      };
      for (int i = 0; i < kAhead; ++i) issue(i);
      for (int j = 0; j <= n; ++j) {
        const PageRows pf = page_of(j + 2);
        const int ik = j == 0 ? 0 : 2 * j - 1;  // K of tile j
        // Also at j = n (an empty group): wait_group<kAhead> counts on every K and V half-step
        // committing one group (s16 r6's build skipped it here and read the last V tile early).
        issue(ik + kAhead);
        if (j < n) {
          if (j >= 2) mbar_wait(&k_empty[j & 1], (j / 2 - 1) & 1);
          mk.template convert<M>(raw_item(ik), stage_base + (j & 1) * kStage, e5m2);
          mbar_arrive(&k_full[j & 1]);
        }
        if (j >= 1) {
          const int t = j - 1;
          issue(2 * j + kAhead);
          if (t >= 2) mbar_wait(&v_empty[t & 1], (t / 2 - 1) & 1);
          mv.template convert<M>(raw_item(2 * j), stage_base + (t & 1) * kStage + kTileK, e5m2);
          mbar_arrive(&v_full[t & 1]);
        }
        put_page(j + 2, pf);
        named_barrier(1, 128);
      }
    } else {
      // Step j copies K of tile j and V of tile j - 1: a consumer's S of tile j + 1 runs beside
      // its P V of tile j, so K is needed a tile ahead of V. A stage's K (V) is reused once both
      // consumers released tile j - 2's K (V).
      // Chunk counts that do not divide the threads take copy_rows' map, a row address per
      // copy, all loaded in one batch. At heads 192 and 224 (64-key tiles, 12 and 14 copies a
      // thread) that batch spilled and a tile goes as two halves of its rows (each half's rows
      // keep their swizzle): 0.98-1.09x and 1.08-1.33x the whole tile's TFLOP/s on an H100. At
      // head 96 (128-key tiles, 12 copies, a 24-byte spill) halves ran 0.93-1.05x, at 80 and 160
      // (10 copies, no spill) 0.99-1.03x and 0.92-1.06x: whole tiles there (s61 calls 3-4).
      // `chunks`: the row's, K's (kChunks) or V's (kChunksV).
      auto copy_tile = [&](auto chunks, unsigned char* dst, const char* const* rows, int n_valid) {
        constexpr int kC = decltype(chunks)::value;
        if constexpr (kThreads % kC != 0 && kBN == 64 && kBN * kC > 10 * kThreads) {
          constexpr int kHalf = kBN / 2;
          static_assert(kHalf % 8 == 0, "a half's rows keep their swizzle");
          copy_rows<kHalf, kC, KRows>(dst, rows, n_valid, wtid);
          copy_rows<kHalf, kC, KRows>(dst + kHalf * 128, rows + kHalf, n_valid - kHalf, wtid);
        } else {
          copy_rows<kBN, kC, KRows>(dst, rows, n_valid, wtid);
        }
      };
      for (int j = 0; j <= n; ++j) {
        const PageRows pf = page_of(j + 2);  // stored in the ring once this step is issued
        if (j < n) {
          if (j >= 2) mbar_wait(&k_empty[j & 1], (j / 2 - 1) & 1);
          copy_tile(std::integral_constant<int, kChunks>{}, stage_base + (j & 1) * kStage,
                    ring.k[j % 4], ring.rows[j % 4]);
          mbar_arrive_cp_async(&k_full[j & 1]);
        }
        if (j >= 1) {
          const int t = j - 1;
          if (t >= 2) mbar_wait(&v_empty[t & 1], (t / 2 - 1) & 1);
          copy_tile(std::integral_constant<int, kChunksV>{}, stage_base + (t & 1) * kStage + kTileK,
                    ring.v[t % 4], ring.rows[t % 4]);
          mbar_arrive_cp_async(&v_full[t & 1]);
        }
        put_page(j + 2, pf);  // slot (j + 2) % 4 last served tile j - 2, issued at step j - 1
        named_barrier(1, 128);
      }
    }
    cp_async_wait<0>();  // its copies land before the warps exit
    return;
  }

  // ---- consumers: warpgroup c = wg - 1 holds rows 64 c .. 64 c + 63 ----
  regs_inc<kHopperConsumerRegs>();
  const int c = wg - 1;
  const int G = p.group;
  CtaWork ww = w;  // this warpgroup's rows, as a CTA of their own for the row walks
  ww.row0 = w.row0 + 64 * c;
  const MaskPolicy mask{w.kv_len, p.window_left, p.window_right};
  CtaScales cs = cta_scales(p, w.kvh);  // kQToHalf: times this warp's Q factor, below
  const LogitsPolicy& lp = cs.lp;
  float sc = cs.fold_scale ? lp.scale_log2 : 1.f;
  // This thread's rows: r = 64 c + 16 (warp in warpgroup) + lane / 4, and r + 8.
  const int g = lane / 4, tig = lane % 4;
  const int row_t = 64 * c + 16 * (wtid / 32) + g;
  int qpos[2];
  float m[2], l[2], slope[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int pr = w.row0 + row_t + 8 * i;
    const int hd = w.kvh * G + (pr < w.rows ? p.gdiv.rem(pr) : 0);
    qpos[i] = (pr < w.rows ? p.gdiv.div(pr) : 0) + w.shift;
    slope[i] = p.alibi ? p.alibi[hd] : 0.f;
    m[i] = -INFINITY;
    l[i] = 0.f;
    // The sink: one more logit with no value, counted once (split 0, one lane of the row's four).
    if (p.sinks && w.split == 0) {
      m[i] = p.sinks[hd] * kLog2e;
      l[i] = tig == 0 ? 1.f : 0.f;
    }
  }
  float o[1][kDvL / 8][4];  // columns from kDv on: the layout's, never stored
#pragma unroll
  for (int j = 0; j < kDvL / 8; ++j) o[0][j][0] = o[0][j][1] = o[0][j][2] = o[0][j][3] = 0.f;
  const int p_min = w.t_first + w.shift, p_max = w.t_last + w.shift;
  const GmmaDesc qd(smem_addr(sQ) + 64 * c * 128, 16, 1024);
  auto k_addr = [&](int it) { return smem_addr(stage_base + (it & 1) * kStage); };

  float s[1][kBN / 8][4];       // scores of the tile being scored
  uint32_t pa[kBN / 16][1][4];  // probabilities of the tile whose P V is next
  auto issue_s = [&](int it) {  // S = Q K^T of tile it, once its K has landed
    mbar_wait(&k_full[it & 1], (it / 2) & 1);
    fence_proxy_async();  // the producer's cp.async writes, read by wgmma
    const GmmaDesc kd(k_addr(it), 16, 1024);
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const uint32_t col = (kk & 3) * 32;  // k16 step within a column block
      Gmma<M, kBN>::ss(&s[0][0][0], qd.at((kk >> 2) * kQCol + col), kd.at((kk >> 2) * kKCol + col),
                       kk > 0);
    }
  };
  // Scores of tile it -> probabilities (fp32, in s). O's factor for the tile's max is kept for
  // later: this tile's scores are computed while the previous tile's P V still accumulates.
  float corr[2];
  bool rescale = false;
  auto scores = [&](int it) {
    const int n0 = (w.my_lo + it) * kBN;
    if (!cs.fold_scale) {
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[0][j][e] =
              lp.to_log2(s[0][j][e], slope[e / 2], n0 + 8 * j + 2 * tig + (e & 1), qpos[e / 2]);
    }
    if (n0 + kBN > w.kv_len || n0 + kBN - 1 > p_min + p.window_right ||
        n0 < p_max - p.window_left) {
      if constexpr (kMm) {  // each row's band widened to its range (flash_fwd_kernel)
        const int2 band[2] = {mm_row_band(p.mm_offsets, p.mm_ranges, w.seq, mask, qpos[0]),
                              mm_row_band(p.mm_offsets, p.mm_ranges, w.seq, mask, qpos[1])};
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = n0 + 8 * j + 2 * tig + (e & 1);
            if (key < band[e / 2].x || key > band[e / 2].y) s[0][j][e] = -INFINITY;
          }
      } else {
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (!mask.visible(n0 + 8 * j + 2 * tig + (e & 1), qpos[e / 2])) s[0][j][e] = -INFINITY;
      }
    }
    softmax_step(s, m, l, sc, NoTileMaxHook{}, [&](const float(&f)[2], bool any) {
      corr[0] = f[0];
      corr[1] = f[1];
      rescale = any;
    });
  };
  auto to_p = [&] {
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) p_frags<Elem<M>>(s, kk, pa[kk]);
  };

  // Per tile, in the order of FA3's intra-warpgroup overlap: S of tile t + 1 is issued, then O is
  // rescaled for tile t's max and P V of tile t issued; tile t + 1's softmax starts once its S has
  // landed, under the P V (ptxas places the P V's wait after the masks and row maxima; pinned
  // after the exponentials it measured 1-7% slower, s15 r4), and its probabilities become P
  // fragments once the P V is done. The two consumers also take turns at the tensor cores
  // (ping-pong), so each one's softmax runs under the other's MMAs too. Consumer c waits on
  // barrier 4 + c for its turn and passes it with an arrival on the other's; consumer 1 starts by
  // passing, and skips its last pass, so that every wait meets exactly one arrival.
  mbar_wait(&q_full, 0);  // also before the epilogue writes O over Q
  if constexpr (kQToHalf) {
    const float f = q_rows_to_half<kD, QRows>(sQ, 64 * c + 16 * (wtid / 32), lane);
    cs.lp.scale *= f;
    cs.lp.scale_log2 *= f;
    sc = cs.fold_scale ? lp.scale_log2 : 1.f;
  }
  if (n > 0) {
    constexpr int kTurn = 4;
    if (c == 1) named_barrier_arrive(kTurn + 0, 256);
    named_barrier(kTurn + c, 256);
    gmma_arrive();
    issue_s(0);
    gmma_commit();
    named_barrier_arrive(kTurn + 1 - c, 256);
    gmma_wait<0>();
    gmma_fence_regs<kBN / 2>(&s[0][0][0]);
    mbar_arrive(&k_empty[0]);
    scores(0);
    rescale = false;  // O is still zero
    to_p();
    auto issue_pv = [&](int it) {  // O += P V of tile it, once its V has landed
      if (rescale) rescale_o(o, corr);
      mbar_wait(&v_full[it & 1], (it / 2) & 1);
      fence_proxy_async();
      gmma_fence_regs<kDvL / 2>(&o[0][0][0]);
      gmma_fence_regs<kBN / 4>(&pa[0][0][0]);
      gmma_arrive();  // orders the rescale before the P V reads O
      const GmmaDesc vd(k_addr(it) + kTileK, kKCol, 1024);
#pragma unroll
      for (int kk = 0; kk < kBN / 16; ++kk)
        Gmma<M, kDvL>::rs_t(&o[0][0][0], pa[kk][0], vd.at(kk * 16 * 128));
      gmma_commit();
    };
    auto pv_done = [&](int it) {
      gmma_wait<0>();
      gmma_fence_regs<kDvL / 2>(&o[0][0][0]);
      gmma_fence_regs<kBN / 4>(&pa[0][0][0]);
      mbar_arrive(&v_empty[it & 1]);
    };
    for (int it = 0; it + 1 < n; ++it) {
      named_barrier(kTurn + c, 256);
      gmma_arrive();
      issue_s(it + 1);
      gmma_commit();
      issue_pv(it);
      named_barrier_arrive(kTurn + 1 - c, 256);
      gmma_wait<1>();  // S of tile it + 1
      gmma_fence_regs<kBN / 2>(&s[0][0][0]);
      mbar_arrive(&k_empty[(it + 1) & 1]);
      scores(it + 1);
      pv_done(it);
      to_p();
    }
    // The last tile: its P V alone (peeled: with the S issue conditional inside the loop, ptxas
    // serialized every wgmma of the kernel, C7514).
    named_barrier(kTurn + c, 256);
    issue_pv(n - 1);
    if (c == 0) named_barrier_arrive(kTurn + 1, 256);
    pv_done(n - 1);
  }

  // ---- epilogue ----
  float f[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
    f[i] = (l[i] > 0.f ? 1.f / l[i] : 0.f) * cs.v_scale;  // 0 for rows that saw no key
  }
  if (p.num_splits == 1) {
    // O goes through this warpgroup's own Q rows (same swizzled layout; the other warpgroup may
    // still be reading its rows and the stages) and leaves as whole 16-byte chunks.
    named_barrier(2 + c, 128);  // every warp of this warpgroup is past its last wgmma
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = row_t + 8 * i, pr = w.row0 + r;
#pragma unroll
      for (int j = 0; j < kChunksV; ++j)
        *reinterpret_cast<uint32_t*>(sQ + QRows::at(r, j) + 4 * tig) =
            E::pack(o[0][j][2 * i] * f[i], o[0][j][2 * i + 1] * f[i]);
      if (p.lse && tig == 0 && pr < w.rows) {
        const int t = p.gdiv.div(pr);
        p.lse[int64_t(w.q_start + t) * p.num_heads + w.kvh * G + p.gdiv.mod(pr, t)] =
            row_lse(m[i], l[i]);
      }
    }
    named_barrier(2 + c, 128);
    using Walk = RowWalk<kChunksV>;
    Walk rw(p, ww, wtid, p.o_stride_token, p.o_stride_head);
    if (!rw.active()) return;
    T* out = static_cast<T*>(p.out) + rw.cc * 8;
#pragma unroll
    for (int i = 0; i < 64 / Walk::kStep; ++i, rw.next()) {
      if (rw.pr >= w.rows) return;
      const uint4 v = *reinterpret_cast<const uint4*>(sQ + QRows::at(64 * c + rw.r, rw.cc));
      if (p.out_vec16) {
        *reinterpret_cast<uint4*>(out + rw.off) = v;
      } else {
        uint32_t* d = reinterpret_cast<uint32_t*>(out + rw.off);
        d[0] = v.x;
        d[1] = v.y;
        d[2] = v.z;
        d[3] = v.w;
      }
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {  // split partials: fp32 rows of the workspace
    const int pr = w.row0 + row_t + 8 * i;
    if (pr >= w.rows) continue;
    const int t = p.gdiv.div(pr), tok = w.q_start + t, h = w.kvh * G + p.gdiv.mod(pr, t);
    const int64_t row = (int64_t(w.split) * p.total_q_capacity + tok) * p.num_heads + h;
    float* out = p.ws_o + row * kDv + 2 * tig;
#pragma unroll
    for (int j = 0; j < kChunksV; ++j)
      *reinterpret_cast<float2*>(out + 8 * j) =
          make_float2(o[0][j][2 * i] * f[i], o[0][j][2 * i + 1] * f[i]);
    if (tig == 0) p.ws_lse[row] = row_lse(m[i], l[i]);
  }
#else
  __trap();  // built for sm_90a only; the plan never picks this form elsewhere
#endif
}

}  // namespace attnkit::cuda_flash
