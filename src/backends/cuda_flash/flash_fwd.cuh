// The v2 forward kernel family: paged, varlen, GQA-packed flash attention on mma.sync (SM80+).
// One CTA = 128, 64 or 16 packed rows (query token x query head of one KV head; block_m) against
// a range of keys read through the block table, so the query heads of a KV head share every K/V
// tile (decode reads each KV byte once). cp.async stages K/V in a ring of 1-3 tiles (tiles.hpp:
// num_stages, tile_keys). fp8 tiles are converted in registers right before the MMA in the decode
// form (Q.K^T and P.V as fp16 MMAs), and dequantized once into a shared-memory tile in the prefill
// form (four warps read each K/V fragment there); the scales fold into the softmax scale and the
// output. Split-KV CTAs write fp32 partials and their LSE; a combine kernel merges them. Tiles
// whose rows are a multiple of 128 bytes are stored unpadded with swizzled 16-byte chunks
// (SmemRows). Heads over 256 use flash_wide.cuh, which shares the pieces below.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda_flash/flash_params.hpp"
#include "backends/cuda_flash/pdl.cuh"
#include "backends/cuda_flash/tiles.hpp"

namespace attnkit::cuda_flash {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// ---- PTX wrappers --------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy; `valid == false` writes zeros and reads nothing (rows past seqused_k are
// never touched, so NaN-poisoned unused slots cannot leak in). The L2::128B hint (L2 fetches
// whole 128-byte lines) made decode 1-2.5% faster at every shape, prefill unchanged (v2n r4).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(n));
}
// The same copy for a source known to be readable (no zero-fill operand).
__device__ __forceinline__ void cp_async16_full(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
// A global load issued where it stands in the program (not sunk towards its first use).
__device__ __forceinline__ int load_now(const int32_t* p) {
  int v;
  asm volatile("ld.volatile.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x2_t(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// Element traits: the tensor-core instruction and float packing for bf16 and fp16.
template <typename T>
struct Elem;
template <>
struct Elem<__nv_bfloat16> {
  __device__ __forceinline__ static void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ static uint32_t pack(float x, float y) {
    __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  __device__ __forceinline__ static uint32_t from_half2(__half2 h) {
    float2 f = __half22float2(h);  // exact: fp8 values are exact in fp16 and in bf16
    return pack(f.x, f.y);
  }
};
template <>
struct Elem<__half> {
  __device__ __forceinline__ static void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ static uint32_t pack(float x, float y) {
    __half2 h = __floats2half2_rn(x, y);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  __device__ __forceinline__ static uint32_t from_half2(__half2 h) {
    return *reinterpret_cast<uint32_t*>(&h);
  }
};

// Four fp8 bytes (low byte = lowest element) to two half2 registers, exactly: bytes 0-1 to lo,
// bytes 2-3 to hi. e5m2 is the top byte of an fp16. SM89+ converts an e4m3 pair in one
// instruction that reads either half of the word in place (the 16-bit intrinsic on the shifted
// word cost a shift per word).
__device__ __forceinline__ void fp8x4_to_half2x2(uint32_t w, bool e5m2, uint32_t& lo,
                                                 uint32_t& hi) {
  if (e5m2) {
    lo = __byte_perm(w, 0u, 0x1404u);
    hi = __byte_perm(w, 0u, 0x3424u);
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.rn.f16x2.e4m3x2 %0, l;\n"
      " cvt.rn.f16x2.e4m3x2 %1, h;\n}\n"
      : "=r"(lo), "=r"(hi)
      : "r"(w));
#else
  const __half2_raw a = __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(w & 0xffffu), __NV_E4M3);
  const __half2_raw b = __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(w >> 16), __NV_E4M3);
  lo = uint32_t(a.x) | uint32_t(a.y) << 16;
  hi = uint32_t(b.x) | uint32_t(b.y) << 16;
#endif
}

// 16 fp8 codes (w4, lowest byte first) -> 16 elements of T, the first 8 at lo and the others at
// hi (16-byte aligned both), exactly: fp8 -> half2, then to T.
template <typename T>
__device__ __forceinline__ void dequant16(uint4 w4, T* lo, T* hi, bool e5m2) {
  const uint32_t w[4] = {w4.x, w4.y, w4.z, w4.w};
  uint32_t outw[8];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint32_t lo, hi;
    fp8x4_to_half2x2(w[j], e5m2, lo, hi);
    outw[2 * j] = Elem<T>::from_half2(*reinterpret_cast<const __half2*>(&lo));
    outw[2 * j + 1] = Elem<T>::from_half2(*reinterpret_cast<const __half2*>(&hi));
  }
  *reinterpret_cast<uint4*>(lo) = make_uint4(outw[0], outw[1], outw[2], outw[3]);
  *reinterpret_cast<uint4*>(hi) = make_uint4(outw[4], outw[5], outw[6], outw[7]);
}
// The same from 16 bytes at raw (16-byte aligned): the prefill forms' dequantized tiles.
template <typename T>
__device__ __forceinline__ void dequant16(const unsigned char* raw, T* lo, T* hi, bool e5m2) {
  dequant16(*reinterpret_cast<const uint4*>(raw), lo, hi, e5m2);
}

// 2^x on the special-function unit; flushes results below 2^-126 to zero (a probability that
// small is below the rounding of the row sum anyway) and gives 0 for -inf.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Natural-log LSE of a row from its running max m (log2 units) and sum l; -inf for a row that saw
// no key. The hardware log2 (2^-22 absolute error near 1, where l lies) in place of log2f's
// ~30-instruction polynomial.
__device__ __forceinline__ float row_lse(float m, float l) {
  return l > 0.f ? (m + __log2f(l)) * kLn2 : -INFINITY;
}

// ---- policies --------------------------------------------------------------------------------

// Which keys a query sees: bottom-right aligned, [qpos - left, qpos + right] within [0, kv_len).
// Causal is right = 0; "unbounded" sides are kUnboundedWindow.
struct MaskPolicy {
  int kv_len, left, right;
  __device__ __forceinline__ bool visible(int key, int qpos) const {
    return key < kv_len && key >= qpos - left && key <= qpos + right;
  }
};

// Chunked local attention (kChunk instantiations): the first key of the chunk that holds key
// position qpos >= 0 (a row at qpos < 0 sees no key whatever this says).
__device__ __forceinline__ int chunk_first_key(const FlashParams& p, int qpos) {
  return qpos >= 0 ? qpos - p.cdiv.rem(qpos) : qpos;
}

// PrefixLM (docs/semantics.md §4): the keys [lo, hi] a row at qpos sees, its mask's band widened
// to all of sequence seq's range that holds qpos. Not inlined: only masked tiles of the prefill
// form's kMm instantiation call it, and it stays out of the key loop's register allocation.
static __device__ __noinline__ int2 mm_row_band(const int32_t* offsets, const int32_t* ranges,
                                                int seq, MaskPolicy mask, int qpos) {
  const int lo = qpos - mask.left, hi = min(qpos + mask.right, mask.kv_len - 1);
  for (int i = offsets[seq], n = offsets[seq + 1]; i < n; ++i) {
    const int s = ranges[2 * i], e = ranges[2 * i + 1];
    if (qpos < s) break;  // ranges are sorted
    if (qpos < e) return make_int2(min(lo, s), max(hi, e - 1));
  }
  return make_int2(lo, hi);
}

// Score transform in natural-log units: scale, soft cap, ALiBi (-slope * |qpos - key|).
struct LogitsPolicy {
  float scale, scale_log2, softcap;
  bool has_softcap, has_alibi;
  __device__ __forceinline__ float to_log2(float s, float slope, int key, int qpos) const {
    if (!has_softcap && !has_alibi) return s * scale_log2;
    float x = s * scale;
    if (has_softcap) x = softcap * tanhf(x / softcap);
    if (has_alibi) x -= slope * fabsf(float(qpos - key));
    return x * kLog2e;
  }
};

// The CTA's logits transform with its KV head's K scale folded in, and the V scale (1 for 16-bit
// caches; per tensor or per KV head for fp8). fold_scale: plain logits (no softcap, no ALiBi) with
// a positive scale, where the max runs on raw scores and the scale folds into exp2's argument (a
// non-positive scale would reverse the max).
struct CtaScales {
  LogitsPolicy lp;
  float v_scale;
  bool fold_scale;
};
__device__ __forceinline__ CtaScales cta_scales(const FlashParams& p, int kvh) {
  const int i = p.scale_per_head ? kvh : 0;
  const float ks = p.k_scale ? p.k_scale[i] : 1.f;
  CtaScales c{{p.scale * ks, p.scale_log2 * ks, p.softcap, p.softcap > 0.f, p.alibi != nullptr},
              p.v_scale ? p.v_scale[i] : 1.f,
              false};
  c.fold_scale = !c.lp.has_softcap && !c.lp.has_alibi && c.lp.scale_log2 > 0.f;
  return c;
}

// Copies kRows rows of kChunks 16-byte chunks (row r from rows[r]; rows from n_valid on are
// zero-filled, never read) into the tile at dst (layout Rows). The row addresses are read in one
// batch before any copy is issued: one at a time, every copy waited on its shared load (v2f ncu:
// 12% of the prefill kernel's stall samples).
template <int kRows, int kChunks, typename Rows>
__device__ __forceinline__ void copy_rows(unsigned char* dst, const char* const* rows, int n_valid,
                                          int tid) {
  constexpr int kTot = kRows * kChunks;
  constexpr int kIters = (kTot + kThreads - 1) / kThreads;
  // row and chunk of copy c = tid + i * kThreads, with the per-thread part hoisted when the chunk
  // count divides the threads
  auto row = [&](int i) {
    return kThreads % kChunks == 0 ? tid / kChunks + i * (kThreads / kChunks)
                                   : (tid + i * kThreads) / kChunks;
  };
  auto chunk = [&](int i) {
    return kThreads % kChunks == 0 ? tid % kChunks : (tid + i * kThreads) % kChunks;
  };
  auto active = [&](int i) { return kTot % kThreads == 0 || tid + i * kThreads < kTot; };
  const char* src[kIters];
#pragma unroll
  for (int i = 0; i < kIters; ++i) src[i] = active(i) ? rows[row(i)] : nullptr;
#pragma unroll
  for (int i = 0; i < kIters; ++i)
    if (active(i))
      cp_async16(smem_addr(dst + Rows::at(row(i), chunk(i))), src[i] + chunk(i) * 16,
                 row(i) < n_valid);
}

// A key tile lies inside one page whose rows are packed (the canonical HND cache with a page size
// that is a multiple of the tile's keys): every row address is row 0's plus a constant, so a copy
// is one cp.async off a shared base (copy_rows' shared load, 64-bit add and compare per copy are
// ~11% of a head-256 prefill tile's instructions, v2l ncu). Uniform over a launch; used by the
// kernel forms of tiles.hpp packed_page_copies.
template <int kBN, int kRowBytesK, int kRowBytesV>
__device__ __forceinline__ bool tiles_in_one_page(const FlashParams& p) {
  return p.block_size % kBN == 0 && p.k_stride_token == kRowBytesK &&
         p.v_stride_token == kRowBytesV;
}

// copy_rows for a tile in one page (tiles_in_one_page): row r from base + r * kChunks * 16. Rows
// from n_valid on are zero-filled; their addresses stay inside the page, never read.
// Where the chunk count divides the threads, a thread copies one chunk column of evenly many rows.
template <int kRows, int kChunks, typename Rows>
__device__ __forceinline__ void copy_packed_columns(unsigned char* dst, const char* base,
                                                    int n_valid, int tid) {
  static_assert(kThreads % kChunks == 0 && kRows % (kThreads / kChunks) == 0,
                "a thread keeps one chunk column of evenly many rows");
  constexpr int kStep = kThreads / kChunks, kIters = kRows / kStep;
  static_assert(kStep % 8 == 0 || !Rows::kSwizzled, "a thread's rows share their swizzle");
  constexpr int kRowBytes = Rows::kStride;
  const int r0 = tid / kChunks, c = tid % kChunks;
  const uint32_t d = smem_addr(dst + Rows::at(r0, c));
  const char* src = base + r0 * (kChunks * 16) + c * 16;
  if (n_valid == kRows) {
#pragma unroll
    for (int i = 0; i < kIters; ++i)
      cp_async16_full(d + i * kStep * kRowBytes, src + i * kStep * (kChunks * 16));
  } else {
#pragma unroll
    for (int i = 0; i < kIters; ++i)
      // The row guard holds for every tid < kThreads; without it ptxas scheduled the head-128
      // prefill loop 2-3% slower (v2l r3 against r4, the same code otherwise).
      if (r0 + i * kStep < kRows)
        cp_async16(d + i * kStep * kRowBytes, src + i * kStep * (kChunks * 16),
                   r0 + i * kStep < n_valid);
  }
}
// Rows of 10 or 12 chunks (heads 80, 96) do not divide the threads: the tile is one run of
// kRows * kChunks chunks, and chunk c = tid + i * kThreads goes from base + 16 c to row
// c / kChunks, so every copy's source is the thread's own address plus a constant.
template <int kRows, int kChunks, typename Rows>
__device__ __forceinline__ void copy_packed_rows(unsigned char* dst, const char* base, int n_valid,
                                                 int tid) {
  if constexpr (kThreads % kChunks == 0) {
    copy_packed_columns<kRows, kChunks, Rows>(dst, base, n_valid, tid);
  } else {
    constexpr int kTot = kRows * kChunks, kIters = kTot / kThreads;
    static_assert(kTot % kThreads == 0, "every thread copies the same number of chunks");
    const char* src = base + tid * 16;
    const uint32_t d0 = smem_addr(dst);
    auto row = [&](int i) { return (tid + i * kThreads) / kChunks; };
    auto dst_of = [&](int i) {
      return d0 + Rows::at(row(i), tid + i * kThreads - row(i) * kChunks);
    };
    if (n_valid == kRows) {
#pragma unroll
      for (int i = 0; i < kIters; ++i) cp_async16_full(dst_of(i), src + i * kThreads * 16);
    } else {
#pragma unroll
      for (int i = 0; i < kIters; ++i)
        cp_async16(dst_of(i), src + i * kThreads * 16, row(i) < n_valid);
    }
  }
}

// ---- pieces both kernels (flash_fwd_kernel, flash_wide_kernel) share ----------------------------

// The rows and keys of one CTA: grid (m block, KV head, sequence x split), kBM packed rows
// (query token x query head of the KV head) and, of the key tiles those rows see, this split's
// share [my_lo, my_hi) of `nsplit` shares.
struct CtaWork {
  int seq, split, nsplit, kvh, q_start, rows, row0, kv_len, shift, t_first, t_last, my_lo, my_hi;
};

// The CTA's ragged item as ragged_item found it: sequence, split, the sequence's count (kept in
// shared memory, so that the epilogue reads the count there instead of a register holding it
// through the key loop).
__device__ __forceinline__ int* ragged_slots() {
  __shared__ int s_item[3];
  return s_item;
}
// Grid item z of a ragged plan: each sequence owns count(s) consecutive items, the split
// sequences' in batch order first, then the unsplit ones'.
// Every CTA derives the map from seqused_k, so a graph replayed with other lengths stays correct:
// counts are capped at the plan's workspace extent (num_splits), and while they add up to more
// items than the grid has, the chunk doubles (every CTA computes the same chunk). Returns false
// for an item past the last sequence's.
// kChunk: a chunked layer's rows see at most a chunk of keys (tiles.hpp visible_window).
template <int kNT, bool kChunk = false>  // the CTA's threads
__device__ __forceinline__ bool ragged_item(const FlashParams& p, int z, int& seq, int& split,
                                            int& nsplit) {
  __shared__ unsigned s_part[kNT / 32];
  int* s_item = ragged_slots();
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  auto block_sum = [&](int v) {
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    __syncthreads();  // s_part's previous readers are done
    if (lane == 0) s_part[warp] = unsigned(v);
    __syncthreads();
    int t = 0;
#pragma unroll
    for (int w = 0; w < kNT / 32; ++w) t += int(s_part[w]);
    return t;
  };
  int chunk = p.split_chunk;
  auto count = [&](int s) {  // the plan's count (tiles.hpp), at most the workspace's extent
    const int left = kChunk ? visible_window(p.window_left, p.chunk) : p.window_left;
    return ragged_count(ragged_visible_keys(p.seqused_k[s], left), chunk, p.num_splits);
  };
  int split_items = 0;  // items of the split sequences
  for (;;) {
    int mine = 0, mine_split = 0;
    for (int s = tid; s < p.num_seqs; s += kNT) {
      const int n = count(s);
      mine += n;
      mine_split += n > 1 ? n : 0;
    }
    if (block_sum(mine) <= int(gridDim.z) || chunk >= (1 << 29)) {
      split_items = block_sum(mine_split);
      break;
    }
    chunk *= 2;
  }
  if (tid == 0) s_item[0] = -1;
  // Items of split sequences first, then the unsplit ones: the long sequences' CTAs start in the
  // first wave wherever they sit in the batch, not after every short one. One scan counts both
  // kinds, packed (split items << 16 | unsplit sequences): once the chunk fits, their sum is at
  // most the grid's z extent (65535), so neither half carries into the other. (The chunk stops
  // doubling at 2^29 only for sequences of more keys, where items already fall off the grid.)
  int before_split = 0, before_unsplit = 0;  // of the sequences in earlier rounds
  for (int s0 = 0; s0 < p.num_seqs; s0 += kNT) {
    const int s = s0 + tid;
    const int n = s < p.num_seqs ? count(s) : 0;
    unsigned incl = n > 1 ? unsigned(n) << 16 : unsigned(n);  // inclusive scan: warp, then warps
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
      const unsigned x = __shfl_up_sync(0xffffffffu, incl, off);
      if (lane >= off) incl += x;
    }
    __syncthreads();
    if (lane == 31) s_part[warp] = incl;
    __syncthreads();
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < kNT / 32; ++w) {
      if (w < warp) incl += s_part[w];
      total += s_part[w];
    }
    const int first = n > 1 ? before_split + int(incl >> 16) - n
                            : split_items + before_unsplit + int(incl & 0xffff) - 1;
    if (n > 0 && z >= first && z < first + n) {
      s_item[0] = s;
      s_item[1] = z - first;
      s_item[2] = n;
    }
    before_split += int(total >> 16);
    before_unsplit += int(total & 0xffff);
  }
  __syncthreads();
  seq = s_item[0];
  split = s_item[1];
  nsplit = s_item[2];
  return seq >= 0;
}

// False when the CTA has no rows (a short sequence in a batch planned for a longer one, or a
// ragged plan's item past the last sequence's).
// kMm: PrefixLM ranges (p.mm_offsets) widen the keys of the rows they hold. kChunk: the keys
// start at the first row's chunk (p.chunk).
template <int kBM, int kBN, bool kRagged = false, int kNT = kThreads, bool kMm = false,
          bool kChunk = false>
__device__ __forceinline__ bool cta_work(const FlashParams& p, CtaWork& w) {
  w.kvh = blockIdx.y;
  if constexpr (kRagged) {
    if (!ragged_item<kNT, kChunk>(p, blockIdx.z, w.seq, w.split, w.nsplit)) return false;
  } else {
    w.seq = blockIdx.z / p.num_splits;
    w.split = blockIdx.z % p.num_splits;
    w.nsplit = p.num_splits;
  }
  w.q_start = p.cu_seqlens_q[w.seq];
  const int q_len = p.cu_seqlens_q[w.seq + 1] - w.q_start;
  // Issued with the query offsets, before the branch below (a volatile load: ptxas sinks a plain
  // one past the branch, which cost every CTA a second round trip before its first block-table
  // load).
  w.kv_len = load_now(p.seqused_k + w.seq);
  w.rows = q_len * p.group;
  // Row blocks go out last first: under a causal mask the last rows see the most keys, so the
  // longest CTAs start early and the grid ends on short ones (no long CTA alone in the tail).
  w.row0 = (gridDim.x - 1 - blockIdx.x) * kBM;
  if (w.row0 >= w.rows) return false;
  w.shift = w.kv_len - q_len;  // query token t sits at key position t + shift
  w.t_first = p.gdiv.div(w.row0);
  w.t_last = p.gdiv.div(min(w.row0 + kBM, w.rows) - 1);
  int lo_key = max(0, w.t_first + w.shift - p.window_left);
  if constexpr (kChunk) lo_key = max(lo_key, chunk_first_key(p, w.t_first + w.shift));
  int hi_key = max(0, min(w.kv_len, w.t_last + w.shift + p.window_right + 1));
  if constexpr (kMm) {
    // A range that holds one of the CTA's rows adds all of its keys (clamped to the cache's:
    // plan() checked the host copy, and no device copy may make the CTA read past them).
    const int p_first = w.t_first + w.shift, p_last = w.t_last + w.shift;
    for (int i = p.mm_offsets[w.seq], n = p.mm_offsets[w.seq + 1]; i < n; ++i) {
      const int s = p.mm_ranges[2 * i], e = p.mm_ranges[2 * i + 1];
      if (s <= p_last && e > p_first)
        lo_key = max(0, min(lo_key, s)), hi_key = min(w.kv_len, max(hi_key, e));
    }
  }
  const int nb_lo = lo_key / kBN;
  const int nb_hi = hi_key > lo_key ? (hi_key + kBN - 1) / kBN : nb_lo;
  const int per_split = (nb_hi - nb_lo + w.nsplit - 1) / w.nsplit;
  w.my_lo = min(nb_hi, nb_lo + w.split * per_split);
  w.my_hi = min(nb_hi, w.my_lo + per_split);
  return true;
}

// One thread's walk over a CTA's packed rows when its threads copy a tile's 16-byte chunks:
// thread tid takes chunk cc = tid % kLanes of rows r = tid / kLanes, then r + kStep, r + 2 kStep,
// ... (kLanes: the chunks per row rounded up to a power of two, at least 8; lanes past a row's
// chunks idle).
// Packed row pr is query token pr / G and head pr % G of the KV head's group; the walk carries
// both and the row's element offset from step to step, dividing once. Dividing per chunk cost ~45
// instructions a chunk: the Q and O tiles took 1.5 key tiles' worth of instructions per warp in a
// head-128 1k prefill CTA (v2l source counters, cuda_s6_r7/r8); v2o's walk: 6% fewer in the call.
constexpr int pow2_at_least(int x) { return x <= 1 ? 1 : 2 * pow2_at_least((x + 1) / 2); }
constexpr int chunk_lanes(int chunks) { return std::max(8, pow2_at_least(chunks)); }
template <int kChunks>
struct RowWalk {
  static constexpr int kLanes = chunk_lanes(kChunks);
  static constexpr int kStep = kThreads / kLanes;
  static_assert(kThreads % kLanes == 0, "a row's chunks fit the threads");
  int r, cc, pr, h, group, dh;
  int64_t off, doff, wrap;  // elements: (token, head) of row pr; per step; per head wrap
  __device__ __forceinline__ RowWalk(const FlashParams& p, const CtaWork& w, int tid,
                                     int64_t stride_token, int64_t stride_head)
      : r(tid / kLanes), cc(tid % kLanes), pr(w.row0 + r), group(p.group) {
    const int t = p.gdiv.div(pr), dt = p.gdiv.div(kStep);
    h = p.gdiv.mod(pr, t);
    dh = p.gdiv.mod(kStep, dt);
    off = (w.q_start + t) * stride_token + (w.kvh * group + h) * stride_head;
    doff = dt * stride_token + dh * stride_head;
    wrap = stride_token - group * stride_head;
  }
  __device__ __forceinline__ bool active() const { return cc < kChunks; }
  __device__ __forceinline__ void next() {
    r += kStep;
    pr += kStep;
    h += dh;
    off += doff;
    if (h >= group) {
      h -= group;
      off += wrap;
    }
  }
};

// Copies the CTA's kBM packed query rows into sQ (layout Rows); rows past the sequence are zeros.
template <int kBM, int kDqk, typename Rows, typename T>
__device__ __forceinline__ void load_q_tile(const FlashParams& p, const CtaWork& w, T* sQ,
                                            int tid) {
  using Walk = RowWalk<kDqk / 8>;
  static_assert(kBM % Walk::kStep == 0, "whole steps");
  // tid through an opaque move, so that the compiler cannot share this walk's arithmetic (tid /
  // kLanes, the swizzled offsets) with the key loop's K/V copies, which use the same row split:
  // shared, it stays in registers across the loop, and head 64's loop kept predicates as bits of
  // registers (7646 SASS instructions against 7285) and ran 4-7% slower (v2o, s8 r3).
  int tid_q;
  asm volatile("mov.b32 %0, %1;\n" : "=r"(tid_q) : "r"(tid));
  Walk rw(p, w, tid_q, p.q_stride_token, p.q_stride_head);
  if (!rw.active()) return;
  const T* q = static_cast<const T*>(p.q);
  const T* src = q + rw.cc * 8;
  unsigned char* dst = reinterpret_cast<unsigned char*>(sQ);
#pragma unroll
  for (int i = 0; i < kBM / Walk::kStep; ++i, rw.next()) {
    const bool ok = rw.pr < w.rows;
    cp_async16(smem_addr(dst + Rows::at(rw.r, rw.cc)), ok ? src + rw.off : q, ok);
  }
}

// Writes the CTA's kBM packed rows of O from sO (row stride kSO elements) to the output, 16 bytes
// per store where the output allows it (p.out_vec16), else 4. One loop per store width: with the
// choice inside one loop the compiler merged the two paths' stores into three predicated pieces
// per side (seven stores issued per 16-byte chunk, no 16-byte store; v2o ncu, s8 r4).
template <int kBM, int kDv, int kSO, typename T>
__device__ __forceinline__ void store_o_tile(const FlashParams& p, const CtaWork& w, const T* sO,
                                             int tid) {
  using Walk = RowWalk<kDv / 8>;
  static_assert(kBM % Walk::kStep == 0, "whole steps");
  Walk rw(p, w, tid, p.o_stride_token, p.o_stride_head);
  if (!rw.active()) return;
  T* out = static_cast<T*>(p.out) + rw.cc * 8;
  const T* src = sO + rw.r * kSO + rw.cc * 8;
  auto rows = [&](auto&& put) {
#pragma unroll
    for (int i = 0; i < kBM / Walk::kStep; ++i, rw.next()) {
      if (rw.pr >= w.rows) return;
      put(out + rw.off, *reinterpret_cast<const uint4*>(src + i * Walk::kStep * kSO));
    }
  };
  if (p.out_vec16) {
    rows([](T* dst, const uint4& v) { *reinterpret_cast<uint4*>(dst) = v; });
  } else {
    rows([](T* dst, const uint4& v) {
      uint32_t* d = reinterpret_cast<uint32_t*>(dst);
      d[0] = v.x;
      d[1] = v.y;
      d[2] = v.z;
      d[3] = v.w;
    });
  }
}

// Block-table entries of a tile's keys live in a shared-memory ring: they are fetched one tile
// ahead of their copy, so the dependent global load never sits between a cp.async and its
// address. Stored as the global address of each key's K and V row (a row past seqused_k keeps the
// head's base, a valid address the zero-filling copy never reads) and, per slot, how many leading
// rows exist: a 16-byte copy then costs a shared load, a 64-bit add and a compare (v2e rebuilt the
// head base and a select per chunk, ~22 instructions, a quarter of a prefill tile's).
template <int kSlots, int kBN>
struct PageRing {
  const char* k[kSlots][kBN];
  const char* v[kSlots][kBN];
  int rows[kSlots];
};
// A prefetched entry is held as (block, offset) until stored: three registers across the tile's
// math instead of two pointers (the two-m-tile kernels have none to spare).
struct PageRows {
  int blk, off, rows;
};
// With `whole` (pages holding whole tiles) every thread takes the tile's first key's entry.
template <int kBN>
__device__ __forceinline__ PageRows page_of(const FlashParams& p, const CtaWork& w, int nb, int tid,
                                            bool whole = false) {
  PageRows r{0, 0, nb < w.my_hi ? min(kBN, max(0, w.kv_len - nb * kBN)) : 0};
  if (whole ? r.rows > 0 : tid < r.rows) {
    const int tok = nb * kBN + (whole ? 0 : tid);
    const int b = p.bdiv.div(tok);
    r.blk = p.block_table[int64_t(w.seq) * p.block_table_stride + b];
    r.off = p.bdiv.mod(tok, b);
  }
  return r;
}
template <int kSlots, int kBN>
__device__ __forceinline__ void put_page(PageRing<kSlots, kBN>& ring, int slot, const PageRows& r,
                                         const FlashParams& p, const CtaWork& w, int tid) {
  if (tid < kBN) {
    const char* k_base = p.k + w.kvh * p.k_stride_head;
    const char* v_base = p.v + w.kvh * p.v_stride_head;
    const bool ok = tid < r.rows;
    ring.k[slot][tid] = ok ? k_base + r.blk * p.k_stride_block + r.off * p.k_stride_token : k_base;
    ring.v[slot][tid] = ok ? v_base + r.blk * p.v_stride_block + r.off * p.v_stride_token : v_base;
  }
  if (tid == 0) ring.rows[slot] = r.rows;
}

inline constexpr float kRescaleSlack = 8.f;  // online_softmax: log2 of the largest probability

// One online-softmax step on a tile's scores s (rows g and g + 8 of each m-tile; the four lanes
// of a row hold its keys): the running max m moves to the tile's when that exceeds it by more
// than kRescaleSlack, l is then rescaled, and s becomes the probabilities, exp2(s * sc - m), at
// most 2^kRescaleSlack. Scores are in log2 units already (sc = 1) or raw with the scale folded
// into sc. `tile_max` sees the rows' tile maxima before they are used (the warp-pair form takes
// the max with its partner's keys there, so both warps keep the same m). `moved(corr, any)` runs
// before the probabilities: corr holds each row's factor for O, any whether a lane's is not 1.
struct NoTileMaxHook {
  template <int kR>
  __device__ __forceinline__ void operator()(float (&)[kR]) const {}
};
template <int kMT, int kNT, typename TileMax, typename Moved>
__device__ __forceinline__ void softmax_step(float (&s)[kMT][kNT][4], float (&m)[2 * kMT],
                                             float (&l)[2 * kMT], float sc, TileMax&& tile_max,
                                             Moved&& moved_fn) {
  constexpr int kR = 2 * kMT;
  float mx[kR], corr[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r) mx[r] = -INFINITY;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int j = 0; j < kNT; ++j) {
      mx[2 * mt] = fmaxf(mx[2 * mt], fmaxf(s[mt][j][0], s[mt][j][1]));
      mx[2 * mt + 1] = fmaxf(mx[2 * mt + 1], fmaxf(s[mt][j][2], s[mt][j][3]));
    }
  auto lanes_max = [&](int r) {
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
  };
  // Without a hook each row's reduction stays next to its use (the order the 255-register loops
  // were scheduled and measured in).
  constexpr bool kHook = !std::is_same_v<std::decay_t<TileMax>, NoTileMaxHook>;
  if constexpr (kHook) {
#pragma unroll
    for (int r = 0; r < kR; ++r) lanes_max(r);
    tile_max(mx);
  }
  bool moved = false;
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    if constexpr (!kHook) lanes_max(r);
    // Lazy rescaling: the running max stays while the tile's max is at most kRescaleSlack
    // (log2 units) above it. Probabilities are then at most 2^kRescaleSlack, far from overflow
    // in the fp32 sums and the 16-bit P fragments (whose rounding is relative), and O is
    // rescaled only when the max really moves: on short rows it moved on most tiles (v2l ncu:
    // 137 FMULs per warp and tile at S = 1k against 53 at 16k). A NaN tile max keeps m (as
    // fmaxf did).
    const float m_tile = mx[r] * sc;
    const float m_new = m_tile > m[r] + kRescaleSlack ? m_tile : m[r];
    const float m_use = m_new == -INFINITY ? 0.f : m_new;
    corr[r] = exp2f(m[r] - m_use);  // m = -inf gives 0
    moved |= corr[r] != 1.f;
    m[r] = m_new;
    l[r] *= corr[r];
    mx[r] = m_use;
  }
  moved_fn(corr, __any_sync(0xffffffffu, moved));
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float pe = fast_exp2(fmaf(s[mt][j][e], sc, -mx[2 * mt + e / 2]));
        s[mt][j][e] = pe;
        l[2 * mt + e / 2] += pe;
      }
}

// O's rows times their factors (softmax_step's corr).
template <int kMT, int kOT>
__device__ __forceinline__ void rescale_o(float (&o)[kMT][kOT][4], const float (&corr)[2 * kMT]) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int j = 0; j < kOT; ++j) {
      o[mt][j][0] *= corr[2 * mt];
      o[mt][j][1] *= corr[2 * mt];
      o[mt][j][2] *= corr[2 * mt + 1];
      o[mt][j][3] *= corr[2 * mt + 1];
    }
}

// softmax_step with O rescaled in place, before the probabilities.
template <int kMT, int kNT, int kOT, typename TileMax = NoTileMaxHook>
__device__ __forceinline__ void online_softmax(float (&s)[kMT][kNT][4], float (&o)[kMT][kOT][4],
                                               float (&m)[2 * kMT], float (&l)[2 * kMT], float sc,
                                               TileMax&& tile_max = {}) {
  softmax_step(s, m, l, sc, tile_max, [&](const float(&corr)[2 * kMT], bool any) {
    if (any) rescale_o(o, corr);
  });
}

// O += P V from a 16-bit V tile in shared memory (layout VRows) over kKSteps 16-key steps:
// a_frag(kk, a) supplies the probabilities' A fragments of step kk (per m-tile), ldmatrix.trans
// reads V's B fragments. v_lane_addr: this lane's row (keys lane % 8, + 8 for lanes 8..15 and
// 24..31) and column (+ 8 dims for lanes 16..31) of the first 16 x 16 block. O's n8 tiles 2 dn,
// 2 dn + 1 hold the 16 dims 2 dn chunks on, or with kHalfDims (a warp pair's half of V; its lane
// addresses include the warp's 4 h chunks, v_tail_addr its 2 h of the tail) tiles.hpp pair_chunk's.
// Only the first live_mt m-tiles run (CTA-uniform).
template <typename E, typename VRows, int kKSteps, bool kHalfDims = false, int kMT, int kOT,
          typename AFrag>
__device__ __forceinline__ void pv_mma_steps(float (&o)[kMT][kOT][4], AFrag&& a_frag,
                                             uint32_t v_lane_addr, int live_mt,
                                             uint32_t v_tail_addr = 0) {
  constexpr int kGroupTiles = kHalfDims ? pair_group_tiles(kOT) : kOT;
#pragma unroll
  for (int kk = 0; kk < kKSteps; ++kk) {
    uint32_t a[kMT][4];
    a_frag(kk, a);
#pragma unroll
    for (int dn = 0; dn < kOT / 2; ++dn) {
      uint32_t b[4];
      if (2 * dn < kGroupTiles)
        ldsm_x4_t(b,
                  VRows::step(v_lane_addr, kk * 16, kHalfDims ? pair_half_chunk(2 * dn) : 2 * dn));
      else
        ldsm_x4_t(b, VRows::step(v_tail_addr, kk * 16, 2 * dn - kGroupTiles));
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        if (mt < live_mt) {
          E::mma(o[mt][2 * dn], a[mt], b[0], b[1]);
          E::mma(o[mt][2 * dn + 1], a[mt], b[2], b[3]);
        }
      }
    }
  }
}
// The A fragment of 16-key step kk from the probabilities in registers: two n8 score tiles.
template <typename E, int kMT, int kNT>
__device__ __forceinline__ void p_frags(const float (&s)[kMT][kNT][4], int kk,
                                        uint32_t (&a)[kMT][4]) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
    a[mt][0] = E::pack(s[mt][2 * kk][0], s[mt][2 * kk][1]);
    a[mt][1] = E::pack(s[mt][2 * kk][2], s[mt][2 * kk][3]);
    a[mt][2] = E::pack(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
    a[mt][3] = E::pack(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
  }
}
// O += P V with every key of the tile's probabilities s in this warp's registers.
template <typename E, typename VRows, int kMT, int kNT, int kOT>
__device__ __forceinline__ void pv_mma(float (&o)[kMT][kOT][4], const float (&s)[kMT][kNT][4],
                                       uint32_t v_lane_addr, int live_mt) {
  pv_mma_steps<E, VRows, kNT / 2>(
      o, [&](int kk, uint32_t(&a)[kMT][4]) { p_frags<E>(s, kk, a); }, v_lane_addr, live_mt);
}

// ---- the kernel ------------------------------------------------------------------------------

// kWarpsSplitKeys = false (prefill): 128 packed rows per CTA, 32 per warp as two 16-row m-tiles
// (prefill_m_tiles), each warp sees every key. With separate K and V (16-bit heads 129..256,
// tiles.hpp separate_kv) 64 rows per CTA run on warp pairs: both warps of a pair hold the same 32
// rows, each computes their scores against half of a tile's keys (sharing the row maxima through
// shared memory) and O for half of the V dimensions, taking the partner's probabilities from
// shared memory. Each K and V fragment then feeds two m-tiles: at head 256, 4k, ldmatrix went
// from 75.5 M to 52.4 M instructions and shared-memory wavefronts down 23% against one warp per
// 16 rows holding all of O (FA2's layout; v2n ncu, r2).
// kWarpsSplitKeys = true (decode, <= 16 packed rows): one 16-row tile shared by the 4 warps, each
// taking a quarter of every key tile; the warps' softmax states merge through shared memory at the
// end. All four warps then do tensor work on every tile, a quarter each, instead of one warp
// doing all of it while three wait on the same loads.
// kFp8Format: 0 reads the fp8 format (e4m3 / e5m2) from the params; 1 is e4m3 and 2 e5m2 fixed
// at compile time. The decode form converts every K/V pair in its inner loop, where a run-time
// format compiled both conversions, the unused one predicated off but still issued.
// kRagged: the decode form under a ragged plan (a split count per sequence, ragged_item), its
// own instantiation so that the uniform kernels' code stays as it was.
// kMm: the prefill form with PrefixLM ranges (p.mm_offsets), likewise its own instantiation: code
// for the ranges in the shared one made ptxas spill in its 255-register loops and cost batches
// without ranges 5-12% (bench/NOTES.md, session 24).
// kChunk: the decode form for chunked local attention (p.chunk): each row's first key is its
// chunk's; its own instantiation, as the chunk in the shared code slowed layers without one
// (bench/NOTES.md, session 43).
template <int kDqk, int kDv, typename T, bool kFp8, bool kWarpsSplitKeys, int kFp8Format = 0,
          bool kRagged = false, bool kMm = false, bool kChunk = false>
__global__ void __launch_bounds__(kThreads) flash_fwd_kernel(const FlashParams p) {
  static_assert(!kRagged || kWarpsSplitKeys, "ragged plans run the decode form only");
  static_assert(!kMm || !kWarpsSplitKeys, "PrefixLM ranges run the prefill form only");
  static_assert(!kChunk || kWarpsSplitKeys, "chunked local attention runs the decode form only");
  constexpr int kBN = tile_keys(kDqk, kDv, kFp8, kWarpsSplitKeys);
  constexpr int kBM = block_m(kWarpsSplitKeys, kDqk, kDv);
  // FA2's K/V schedule (tiles.hpp separate_kv): one K and one V buffer, V loading under Q.K^T and
  // the softmax, the next K under P.V; two page slots. It runs on warp pairs (above).
  constexpr bool kSepKV = separate_kv(kDqk, kDv, kFp8, kWarpsSplitKeys);
  // m-tiles per warp
  constexpr int kMT = kWarpsSplitKeys ? 1 : kSepKV ? 2 : prefill_m_tiles(kDqk, kDv);
  constexpr int kDvW = kSepKV ? kDv / 2 : kDv;  // O columns of a warp
  static_assert(!kSepKV || (kBM == 32 * kMT && kDv % 32 == 0), "two pairs of 32 rows");
  static_assert(!kSepKV || kDv % 64 == 0 || !SmemRows<kDv * 2>::kSwizzled,
                "a pair's 16-dim tail halves take unswizzled V rows");
  // Shared-memory tiles (SmemRows): Q, K and the dequantized K rows; V rows; raw fp8 rows.
  using QRows = SmemRows<kDqk * 2>;
  using VRows = SmemRows<kDv * 2>;
  using KRaw = SmemRows<kDqk>;
  using VRaw = SmemRows<kDv>;
  constexpr int kSQ = QRows::kStride / 2;  // elements
  constexpr int kSV = VRows::kStride / 2;
  constexpr int kRawQK = KRaw::kStride;  // bytes
  constexpr int kRawV = VRaw::kStride;
  constexpr int kSO = kDv + 8;  // the epilogue's O tile: padded rows (4-byte fragment stores)
  // Q fragments stay in registers when they fit next to the O and S accumulators; else ldmatrix
  // re-reads them every tile.
  constexpr bool kQInRegs = kMT == 1 ? kDqk <= 128 : kMT * (kDqk / 4 + kDv / 2 + kBN / 2) <= 160;
  constexpr int kElemBytes = kFp8 ? 1 : 2;
  constexpr int kChunksK = kDqk * kElemBytes / 16;  // 16-byte chunks per row
  constexpr int kChunksV = kDv * kElemBytes / 16;
  // keys of a tile whose scores one warp computes
  constexpr int kWarpKeys = kWarpsSplitKeys ? kBN / 4 : kSepKV ? kBN / 2 : kBN;
  constexpr int kStages = num_stages(kDqk, kDv, kFp8, kWarpsSplitKeys);
  constexpr int kSlots = kStages + 1;  // block-table ring: tiles in flight plus one prefetched
  static_assert(kDqk % 16 == 0 && kDv % 16 == 0, "head sizes are multiples of 16");
  static_assert(kWarpKeys % 16 == 0, "a warp's key slice is a multiple of 16");
  using E = Elem<T>;
  // fp8 in the decode form: fragments straight from the raw tile, converted in registers.
  constexpr bool kFp8Regs = kFp8 && kWarpsSplitKeys;
  static_assert(!kWarpsSplitKeys || !kFp8Regs ||
                    flash_smem_bytes(kDqk, kDv, kFp8, true) >=
                        kBM * kSQ * 2 + 4 * 16 * kDv * 4 + 2 * 4 * 16 * 4,
                "the decode epilogue's merge area fits in the stages");

  extern __shared__ __align__(128) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  unsigned char* stage_base = smem + kBM * kSQ * 2;
  constexpr int kStageK = kFp8 ? kBN * kRawQK : kBN * kSQ * 2;  // bytes
  constexpr int kStageV = kFp8 ? kBN * kRawV : kBN * kSV * 2;
  auto sK_stage = [&](int s) { return stage_base + s * (kStageK + kStageV); };
  auto sV_stage = [&](int s) { return stage_base + s * (kStageK + kStageV) + kStageK; };
  // fp8: the dequantized tile the tensor cores read
  T* sKc = reinterpret_cast<T*>(stage_base + kStages * (kStageK + kStageV));
  T* sVc = sKc + kBN * kSQ;
  static_assert((kBM * kSQ * 2) % 128 == 0 && kStageK % 128 == 0 && kStageV % 128 == 0,
                "every tile starts 128-byte aligned (the swizzle's span)");
  // warp pairs: each pair's probabilities [32][kBN + 8] and its two warps' row values [2][32]
  // (tile maxima, then the row sums), where the 16-bit forms keep no dequantized tile
  constexpr int kSP = kBN + 8;
  T* sP = sKc;
  float* sX = reinterpret_cast<float*>(sP + 2 * 32 * kSP);

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int pair = warp / 2, half = kSepKV ? warp % 2 : 0;
  const bool e5m2 = kFp8Format == 0 ? p.kv_e5m2 != 0 : kFp8Format == 2;
  CtaWork w;
  if (!cta_work<kBM, kBN, kRagged, kThreads, kMm, kChunk>(p, w)) return;
  const int kvh = w.kvh, split = w.split, q_start = w.q_start, rows = w.rows, row0 = w.row0;
  const int kv_len = w.kv_len, shift = w.shift, t_first = w.t_first, t_last = w.t_last;
  const int my_lo = w.my_lo, my_hi = w.my_hi, G = p.group;

  const MaskPolicy mask{kv_len, p.window_left, p.window_right};
  // The page ring (PageRing): tile t uses slot (t - my_lo) % kSlots, stage (t - my_lo) % kStages.
  __shared__ PageRing<kSlots, kBN> ring;
  auto put_page = [&](int slot, const PageRows& r) {
    cuda_flash::put_page(ring, slot, r, p, w, tid);
  };
  // The decode form goes out as a programmatic dependent of the stream's previous kernel (SM90,
  // p.pdl): the batch metadata (cta_work) and its first tiles' block-table entries are requested
  // while that kernel finishes; the scales, Q and the cache are read, and anything written, only
  // once it has (docs/semantics.md §7); Q's copy is issued while the block-table loads are still
  // in flight. Then it lets its own dependent, the combine kernel, launch: at the kernel's start
  // (where it was before) that let a later layer's kernels launch and wait in turn, holding SM
  // slots (s27 r1: 4x2k 32/4 bf16 12.6 us a layer against 11.3 without the dependent launch;
  // r2, triggered here: 11.0). The prefill forms keep their order.
  constexpr bool kPackedForm = packed_page_copies(kDqk, kDv, kFp8, kWarpsSplitKeys);
  const bool packed = kPackedForm && tiles_in_one_page<kBN, kChunksK * 16, kChunksV * 16>(p);
  auto page_of = [&](int nb) { return cuda_flash::page_of<kBN>(p, w, nb, tid, packed); };
  auto load_k = [&](int stage, int slot) {
    copy_rows<kBN, kChunksK, std::conditional_t<kFp8, KRaw, QRows>>(sK_stage(stage), ring.k[slot],
                                                                    ring.rows[slot], tid);
  };
  auto load_v = [&](int stage, int slot) {
    copy_rows<kBN, kChunksV, std::conditional_t<kFp8, VRaw, VRows>>(sV_stage(stage), ring.v[slot],
                                                                    ring.rows[slot], tid);
  };
  // Over pages that hold whole tiles (packed) the ring is not used: the next tile's page stays
  // in registers (`next`, its entry loaded a tile ahead as the ring's are), and each copy's source
  // is the page's base plus a constant, with no shared load to wait on between the barrier and
  // the copies (through the ring's first row, heads 80 and 96 ran 1-6% slower: s74 call 2).
  PageRows next{};
  auto load_kv = [&](int stage, int slot) {
    if constexpr (kPackedForm)
      if (packed) {
        const char* kb =
            p.k + kvh * p.k_stride_head + next.blk * p.k_stride_block + next.off * p.k_stride_token;
        const char* vb =
            p.v + kvh * p.v_stride_head + next.blk * p.v_stride_block + next.off * p.v_stride_token;
        copy_packed_rows<kBN, kChunksK, QRows>(sK_stage(stage), kb, next.rows, tid);
        copy_packed_rows<kBN, kChunksV, VRows>(sV_stage(stage), vb, next.rows, tid);
        return;
      }
    load_k(stage, slot);
    load_v(stage, slot);
  };

  // With p.early_kv (AttentionBatch::earlier_rows_settled) the first tile, when it holds only
  // keys below the rows' own (shift), is copied before the wait: in a layer loop its copy runs
  // while the previous layer's combine ends. It rides in Q's group, as the prologue's first tile
  // does; the later tiles wait, so that Q is not queued behind them.
  const bool early = kWarpsSplitKeys && !kSepKV && p.early_kv && (my_lo + 1) * kBN <= shift;
  PageRows first_pages[kWarpsSplitKeys ? kStages : 1];
  if constexpr (kWarpsSplitKeys) {
#pragma unroll
    for (int t = 0; t < kStages; ++t) first_pages[t] = page_of(my_lo + t);
    if (early) {
#pragma unroll
      for (int t = 0; t < kStages; ++t) put_page(t, first_pages[t]);
      __syncthreads();
      if (my_lo < my_hi) load_kv(0, 0);
    }
    pdl_wait_primary();
    pdl_launch_dependents();
  }
  load_q_tile<kBM, kDqk, QRows>(p, w, sQ, tid);

  static_assert(!kPackedForm || kStages == 2, "`next` holds one tile's page");
  PageRows ahead[kPackedForm ? kStages : 1];  // packed: the first tiles' pages
  if (!early) {
#pragma unroll
    for (int t = 0; t < kStages; ++t) {
      if constexpr (kWarpsSplitKeys)
        put_page(t, first_pages[t]);
      else if (packed)
        ahead[t] = page_of(my_lo + t);
      else
        put_page(t, page_of(my_lo + t));
    }
    __syncthreads();
  }
  // Prologue: tiles my_lo .. my_lo + kStages - 2 in flight (Q rides in the first group); with
  // separate K and V, the first K.
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if constexpr (kPackedForm) next = ahead[t];
    if ((t > 0 || !early) && my_lo + t < my_hi) load_kv(t, t);
    cp_async_commit();
  }
  if constexpr (kPackedForm) next = ahead[kStages - 1];
  if constexpr (kSepKV) {
    if (my_lo < my_hi) load_k(0, 0);
    cp_async_commit();
  }
  // The K and V scales (fp8 caches) are loaded only now: read before the first copies, their
  // product with the softmax scale held every thread for a load's latency before it asked for its
  // first tile; here the load hides behind that tile's.
  const CtaScales cs = cta_scales(p, kvh);
  const LogitsPolicy& lp = cs.lp;
  const float v_scale = cs.v_scale;

  // Per-thread row state: rows g and g + 8 of each of this warp's 16-row m-tiles (index 2 mt + i).
  constexpr int kR = 2 * kMT;
  const int g = lane / 4, tig = lane % 4;
  // first row of this warp in the tile, first key of its scores in a tile
  const int wrow0 = kWarpsSplitKeys ? 0 : (kSepKV ? pair : warp) * 16 * kMT;
  const int key0 = kWarpsSplitKeys ? warp * kWarpKeys : half * kWarpKeys;
  const bool warp_active = row0 + wrow0 < rows;
  // Key position of row r's query. Held in registers across the loop where a warp scores fewer
  // than 128 keys; recomputed in the tiles that need them (mask, ALiBi) in the two-m-tile forms
  // (heads 64 and 128) and the warp-pair form, whose 255-register loops otherwise spill (v2o's
  // head 128 spilled four row sums per tile with them in registers, one without).
  constexpr bool kQposRegs = kMT * kWarpKeys < 128 && !kSepKV;
  auto qpos_calc = [&](int r) {
    const int pr = row0 + wrow0 + (r / 2) * 16 + g + 8 * (r % 2);
    return (pr < rows ? p.gdiv.div(pr) : 0) + shift;
  };
  int qpos_reg[kQposRegs ? kR : 1];
#pragma unroll
  for (int r = 0; r < (kQposRegs ? kR : 0); ++r) qpos_reg[r] = qpos_calc(r);
  auto qpos_of = [&](int r) {
    if constexpr (kQposRegs)
      return qpos_reg[r];
    else
      return qpos_calc(r);
  };
  float m[kR], l[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int pr = row0 + wrow0 + (r / 2) * 16 + g + 8 * (r % 2);
    const int hd = kvh * G + (pr < rows ? p.gdiv.rem(pr) : 0);
    m[r] = -INFINITY;
    l[r] = 0.f;
    // The sink is one more logit with no value, counted once: split 0, warp 0 (a pair's two
    // warps both start from its max, one counts it), one lane of 4 (l is a per-thread partial
    // sum until the epilogue).
    if (p.sinks && split == 0 && (!kWarpsSplitKeys || warp == 0)) {
      m[r] = p.sinks[hd] * kLog2e;
      l[r] = tig == 0 && half == 0 ? 1.f : 0.f;
    }
  }
  float o[kMT][kDvW / 8][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int j = 0; j < kDvW / 8; ++j) o[mt][j][0] = o[mt][j][1] = o[mt][j][2] = o[mt][j][3] = 0.f;
  // A warp's row r within its pair's 32, and the pair's barrier (id 0 is __syncthreads').
  auto pair_row = [&](int r) { return (r / 2) * 16 + g + 8 * (r % 2); };
  // Both pairs pass it once per tile, active or not: when a pair without rows skipped it,
  // compute-sanitizer's racecheck reported hazards across the loop's and the epilogue's
  // __syncthreads (v2n final run; the outputs were right).
  auto pair_sync = [&] { asm volatile("bar.sync %0, 64;\n" ::"r"(1 + pair) : "memory"); };
  // Combines v with the partner warp's values of the pair's rows (their max, or their sum).
  auto pair_exchange = [&](float(&v)[kR], bool sum) {
    float* mine = sX + (pair * 2 + half) * 32;
    const float* theirs = sX + (pair * 2 + (half ^ 1)) * 32;
    if (tig == 0)
#pragma unroll
      for (int r = 0; r < kR; ++r) mine[pair_row(r)] = v[r];
    pair_sync();
#pragma unroll
    for (int r = 0; r < kR; ++r)
      v[r] = sum ? v[r] + theirs[pair_row(r)] : fmaxf(v[r], theirs[pair_row(r)]);
  };

  uint32_t qf[kQInRegs ? kMT : 1][kQInRegs ? kDqk / 16 : 1][4];
  const uint32_t q_lane_addr = smem_addr(sQ) + QRows::at(wrow0 + (lane & 15), lane >> 4);
  const bool fold_scale = cs.fold_scale;  // the scale rides in exp2's argument (one FFMA)
  float sc = fold_scale ? lp.scale_log2 : 1.f;
  // fp8 decode multiplies Q by qmul (a power of two) to run Q.K^T as an fp16 MMA; raw scores are
  // then qmul times too large, and qinv undoes that exactly.
  float qinv = 1.f;

  // Rows' extreme positions decide which tiles need the mask at all.
  const int p_min = t_first + shift, p_max = t_last + shift;
  // kChunk: the rows' latest first key (a chunk's start grows with the row's position)
  const int lo_max = kChunk ? max(p_max - p.window_left, chunk_first_key(p, p_max)) : 0;

  for (int nb = my_lo; nb < my_hi; ++nb) {
    const int it = nb - my_lo;
    const int stage = it % kStages;
    PageRows pf;  // rows of tile nb + kStages (nb + 1 with separate K and V), stored later on
    if constexpr (kSepKV) {
      pf = page_of(nb + 1);
      cp_async_wait<0>();  // K of tile nb has landed (for this thread)
      __syncthreads();     // ... for every thread; every warp is done with the previous V
      load_v(0, it % kSlots);
      cp_async_commit();
    } else {
      // Issue tile nb + kStages - 1 (its stage was last read in iteration nb - 1, before the
      // barrier that ended it); an empty group keeps the count uniform near the end.
      if (nb + kStages - 1 < my_hi)
        load_kv((it + kStages - 1) % kStages, (it + kStages - 1) % kSlots);
      cp_async_commit();
      cp_async_wait<kStages - 1>();  // tile nb has landed (for this thread)
      pf = page_of(nb + kStages);
      __syncthreads();
    }

    const T* sK;
    const T* sV;
    if constexpr (kFp8 && !kFp8Regs) {
      const unsigned char* rk = sK_stage(stage);
      const unsigned char* rv = sV_stage(stage);
      // raw chunk cc of row r -> 16-bit chunks 2 cc, 2 cc + 1
      auto dequant = [&]<typename Raw, typename Dst>(const unsigned char* raw, T* dst, int r,
                                                     int cc) {
        unsigned char* d = reinterpret_cast<unsigned char*>(dst);
        dequant16(raw + Raw::at(r, cc), reinterpret_cast<T*>(d + Dst::at(r, 2 * cc)),
                  reinterpret_cast<T*>(d + Dst::at(r, 2 * cc + 1)), e5m2);
      };
      // Lane l of a warp takes row l (of 32 consecutive rows) at one chunk: each 8-lane phase of
      // a 16-byte access then reads and writes 8 consecutive rows at one logical chunk, which
      // every SmemRows layout puts in 8 distinct bank groups (row-major lanes conflicted 2-way on
      // the 16-bit writes, and on the raw reads of padded rows). With fp8 head 96's raw rows
      // swizzled as well, its bank conflicts at 1k fell from 12.4 M to 1.0 M; fp8 prefill at
      // heads 128, 256 and 192/128, whose rows did not change, ran 1.02-1.07x on an H100, 192/192
      // level (s73 call 2).
      static_assert(kBN % 32 == 0, "a warp's lanes take 32 rows of one chunk");
      constexpr int kCK = kDqk / 16, kCV = kDv / 16;
#pragma unroll
      for (int i = 0; i < (kBN * kCK + kThreads - 1) / kThreads; ++i) {
        const int c = tid + i * kThreads;
        if (c < kBN * kCK) dequant.template operator()<KRaw, QRows>(rk, sKc, c % kBN, c / kBN);
      }
#pragma unroll
      for (int i = 0; i < (kBN * kCV + kThreads - 1) / kThreads; ++i) {
        const int c = tid + i * kThreads;
        if (c < kBN * kCV) dequant.template operator()<VRaw, VRows>(rv, sVc, c % kBN, c / kBN);
      }
      __syncthreads();
      sK = sKc;
      sV = sVc;
    } else {
      sK = reinterpret_cast<const T*>(sK_stage(stage));
      sV = reinterpret_cast<const T*>(sV_stage(stage));
    }

    if constexpr (kFp8Regs) {
      // Q fragments with the head dimension permuted to match the fp8 K fragments: thread tig
      // holds dims 4 tig .. 4 tig + 3 of each 16 (k-slots 2 tig, +1 -> dims +0, +1; k-slots
      // 2 tig + 8, +9 -> dims +2, +3). The dot product does not care about the order.
      auto q_words = [&](int r, int kk) {  // dims 16 kk + 4 tig .. + 3 of Q row r
        return *reinterpret_cast<const uint2*>(reinterpret_cast<const unsigned char*>(sQ) +
                                               QRows::at(r, 2 * kk + (tig >> 1)) + (tig & 1) * 8);
      };
      // Q.K^T runs in fp16 so that a K pair costs one fp8 -> f16x2 conversion: bf16 queries are
      // scaled by a power of two that puts the largest |q| of the tile in [2^14, 2^15) (no fp16
      // overflow; every element is exact unless it is 2^-25 below the largest).
      if (nb == my_lo) {
        float qmul = 1.f;
        if constexpr (std::is_same_v<T, __nv_bfloat16>) {
          float amax = 0.f;
#pragma unroll
          for (int kk = 0; kk < kDqk / 16; ++kk)
#pragma unroll
            for (int rr = 0; rr < 2; ++rr) {
              const uint2 w = q_words(g + 8 * rr, kk);
              const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w.x));
              const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w.y));
              amax =
                  fmaxf(amax, fmaxf(fmaxf(fabsf(a.x), fabsf(a.y)), fmaxf(fabsf(b.x), fabsf(b.y))));
            }
#pragma unroll
          for (int off = 1; off < 32; off *= 2)
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
          // Exponent of amax (0 for zero or NaN rows: qmul = 1 there); a finite power of two.
          const int ex = amax > 0.f && amax < INFINITY ? ilogbf(amax) : 14;
          const int qe = min(max(14 - ex, -126), 127);
          qmul = ldexpf(1.f, qe);
          qinv = ldexpf(1.f, -qe);
          if (fold_scale) sc *= qinv;  // else to_log2 takes s * qinv
        }
        // The fragment of dims 16 kk .. + 15 (registers: rows g, g + 8 of dims 4 tig, + 1, then
        // rows g, g + 8 of dims 4 tig + 2, + 3).
        auto q_frag_of = [&](int kk, uint32_t(&h)[4]) {
          if constexpr (std::is_same_v<T, __nv_bfloat16>) {
#pragma unroll
            for (int rr = 0; rr < 2; ++rr) {
              const uint2 w = q_words(g + 8 * rr, kk);
              const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w.x));
              const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w.y));
              h[rr] = Elem<__half>::pack(a.x * qmul, a.y * qmul);
              h[2 + rr] = Elem<__half>::pack(b.x * qmul, b.y * qmul);
            }
          } else {
            const uint2 lo = q_words(g, kk);
            const uint2 hi = q_words(g + 8, kk);
            h[0] = lo.x;
            h[1] = hi.x;
            h[2] = lo.y;
            h[3] = hi.y;
          }
        };
        if constexpr (kQInRegs) {
#pragma unroll
          for (int kk = 0; kk < kDqk / 16; ++kk) q_frag_of(kk, qf[0][kk]);
        } else {
          // Heads over 128: O takes 128 registers at head 256, so the fragments go back into the
          // Q tile in place, each lane's 16 bytes where one LDS.128 finds them every tile. The 512
          // bytes of dims 16 kk .. + 15 hold exactly the 32 lanes' fragments of kk; warp w
          // rewrites kk = w, w + 4, ... (its lanes read theirs before any lane writes), the last
          // round short at heads of 160 and 224 (10 and 14 chunks).
          constexpr int kChunksQ = kDqk / 16;
          constexpr int kOwn = (kChunksQ + 3) / 4;
          if constexpr (std::is_same_v<T, __nv_bfloat16>) __syncthreads();  // maxima read
          uint32_t h[kOwn][4];
#pragma unroll
          for (int i = 0; i < kOwn; ++i)
            if (warp + 4 * i < kChunksQ) q_frag_of(warp + 4 * i, h[i]);
          __syncwarp();
#pragma unroll
          for (int i = 0; i < kOwn; ++i)
            if (warp + 4 * i < kChunksQ)
              *reinterpret_cast<uint4*>(reinterpret_cast<unsigned char*>(sQ) +
                                        QRows::at(lane & 15, 2 * (warp + 4 * i) + (lane >> 4))) =
                  make_uint4(h[i][0], h[i][1], h[i][2], h[i][3]);
          __syncthreads();
        }
      }
    } else if constexpr (kQInRegs) {
      if (nb == my_lo) {
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int kk = 0; kk < kDqk / 16; ++kk)
            ldsm_x4(qf[mt][kk], QRows::step(q_lane_addr, mt * 16, 2 * kk));
      }
    }

    float s[kMT][kWarpKeys / 8][4];
    // warp pairs: this warp's probabilities as P.V A fragments, packed once for both warps' P.V
    uint32_t pa[kSepKV ? kWarpKeys / 16 : 1][kMT][4];
    if (warp_active) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int j = 0; j < kWarpKeys / 8; ++j)
          s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.f;
      if constexpr (kFp8Regs) {
        // K fragment of n8 tile j: key key0 + 8 j + g, dims 4 tig .. +3 of each 16 (4 fp8
        // bytes, two B registers). SM89+ fetches a warp's words of 16 dims with one ldmatrix.x4
        // (its b16 view of 16-byte rows hands thread (g, tig) bytes 4 tig .. +3 of row g): four
        // n8 tiles of one 16-dim step, or at heads over 128 (16 keys a warp) two n8 tiles of two
        // steps. SM80, whose software conversion dominates, keeps one 32-bit load per word (the
        // ldmatrix form spilled there). The raw rows are swizzled (SmemRows): conflict-free.
        constexpr int kNJ = kWarpKeys / 8;  // n8 key tiles of a warp
        static_assert(kNJ == 4 || kNJ == 2, "a warp scores 32 or 16 keys of a tile");
        // The Q fragment of dims 16 kk .. + 15 (see the rewrite above).
        const uint32_t q_frag_lane = QRows::at(lane & 15, lane >> 4);
        auto q_frag = [&](int kk, uint32_t(&a)[4]) {
          if constexpr (kQInRegs) {
#pragma unroll
            for (int x = 0; x < 4; ++x) a[x] = qf[0][kk][x];
          } else {
            const uint4 v = *reinterpret_cast<const uint4*>(
                reinterpret_cast<const unsigned char*>(sQ) + QRows::step(q_frag_lane, 0, 2 * kk));
            a[0] = v.x;
            a[1] = v.y;
            a[2] = v.z;
            a[3] = v.w;
          }
        };
        auto qk_mma = [&](const uint32_t(&a)[4], int j, uint32_t kw) {
          uint32_t k0, k1;
          fp8x4_to_half2x2(kw, e5m2, k0, k1);
          Elem<__half>::mma(s[0][j], a, k0, k1);
        };
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
        constexpr int kSteps = 4 / kNJ;  // 16-dim steps of one ldmatrix.x4
        const uint32_t k_lane =
            smem_addr(sK_stage(stage)) + KRaw::at(key0 + lane % kWarpKeys, lane / kWarpKeys);
#pragma unroll
        for (int kk = 0; kk < kDqk / 16; kk += kSteps) {
          uint32_t kw[4];
          ldsm_x4(kw, KRaw::step(k_lane, 0, kk));
#pragma unroll
          for (int c = 0; c < kSteps; ++c) {
            uint32_t a[4];
            q_frag(kk + c, a);
#pragma unroll
            for (int j = 0; j < kNJ; ++j) qk_mma(a, j, kw[c * kNJ + j]);
          }
        }
#else
        const unsigned char* rk = sK_stage(stage) + 4 * tig;
#pragma unroll
        for (int kk = 0; kk < kDqk / 16; ++kk) {
          uint32_t a[4];
          q_frag(kk, a);
#pragma unroll
          for (int j = 0; j < kNJ; ++j)
            qk_mma(a, j, *reinterpret_cast<const uint32_t*>(rk + KRaw::at(key0 + g + 8 * j, kk)));
        }
#endif
      }
      const uint32_t k_lane_addr =
          smem_addr(sK) + QRows::at(key0 + (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
#pragma unroll
      for (int kk = 0; kk < (kFp8Regs ? 0 : kDqk / 16); ++kk) {
        uint32_t a[kMT][4];
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          if constexpr (kQInRegs) {
#pragma unroll
            for (int x = 0; x < 4; ++x) a[mt][x] = qf[mt][kk][x];
          } else {
            ldsm_x4(a[mt], QRows::step(q_lane_addr, mt * 16, 2 * kk));
          }
        }
#pragma unroll
        for (int nn = 0; nn < kWarpKeys / 16; ++nn) {
          uint32_t b[4];
          ldsm_x4(b, QRows::step(k_lane_addr, nn * 16, 2 * kk));
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt) {
            E::mma(s[mt][2 * nn], a[mt], b[0], b[1]);
            E::mma(s[mt][2 * nn + 1], a[mt], b[2], b[3]);
          }
        }
      }

      // Scores to log2 units (the fast path leaves them raw: `sc` scales inside exp2); the mask
      // only where the tile crosses the visible band's edge.
      const int n0 = nb * kBN + key0;
      const bool need_mask = nb * kBN + kBN > kv_len ||
                             nb * kBN + kBN - 1 > p_min + p.window_right ||
                             (kChunk ? nb * kBN < lo_max : nb * kBN < p_max - p.window_left);
      if (!fold_scale) {
        // ALiBi slopes are re-read here (L1-resident) rather than held in registers across the
        // loop: the fast path needs every register for the accumulators.
        float slope[kR];
        int qpos[kR];
#pragma unroll
        for (int r = 0; r < kR; ++r) {
          const int pr = row0 + wrow0 + (r / 2) * 16 + g + 8 * (r % 2);
          slope[r] = p.alibi ? p.alibi[kvh * G + (pr < rows ? p.gdiv.rem(pr) : 0)] : 0.f;
          qpos[r] = qpos_of(r);
        }
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int j = 0; j < kWarpKeys / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
              s[mt][j][e] = lp.to_log2(s[mt][j][e] * qinv, slope[2 * mt + e / 2],
                                       n0 + j * 8 + 2 * tig + (e & 1), qpos[2 * mt + e / 2]);
      }
      if (need_mask) {
        int qpos[kR];
#pragma unroll
        for (int r = 0; r < kR; ++r) qpos[r] = qpos_of(r);
        if constexpr (kMm) {
          // Ranges only widen rows, so the tiles every row sees whole (need_mask false) stay
          // unmasked; here each row's band is its own.
          int2 band[kR];
#pragma unroll
          for (int r = 0; r < kR; ++r)
            band[r] = mm_row_band(p.mm_offsets, p.mm_ranges, w.seq, mask, qpos[r]);
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
            for (int j = 0; j < kWarpKeys / 8; ++j)
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                const int key = n0 + j * 8 + 2 * tig + (e & 1);
                const int2 b = band[2 * mt + e / 2];
                if (key < b.x || key > b.y) s[mt][j][e] = -INFINITY;
              }
        } else if constexpr (kChunk) {
          int first[kR];
#pragma unroll
          for (int r = 0; r < kR; ++r)
            first[r] = max(qpos[r] - mask.left, chunk_first_key(p, qpos[r]));
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
            for (int j = 0; j < kWarpKeys / 8; ++j)
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                const int key = n0 + j * 8 + 2 * tig + (e & 1), r = 2 * mt + e / 2;
                if (key >= kv_len || key < first[r] || key > qpos[r] + mask.right)
                  s[mt][j][e] = -INFINITY;
              }
        } else {
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
            for (int j = 0; j < kWarpKeys / 8; ++j)
#pragma unroll
              for (int e = 0; e < 4; ++e)
                if (!mask.visible(n0 + j * 8 + 2 * tig + (e & 1), qpos[2 * mt + e / 2]))
                  s[mt][j][e] = -INFINITY;
        }
      }
      if constexpr (kSepKV) {
        // Both warps take the max over the whole tile (their m stay equal, so the pair's
        // probabilities share one scale); each sums only its own keys into l.
        online_softmax(s, o, m, l, sc, [&](float(&mx)[kR]) { pair_exchange(mx, false); });
        // This warp's probabilities for its partner, read after the barrier below: fragment
        // registers 0-3 are rows g, g + 8 of keys 16 kk + 2 tig, then of keys + 8.
        T* sPw = sP + pair * 32 * kSP + key0 + 2 * tig;
#pragma unroll
        for (int kk = 0; kk < kWarpKeys / 16; ++kk) {
          p_frags<E>(s, kk, pa[kk]);
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
            for (int x = 0; x < 4; ++x)
              *reinterpret_cast<uint32_t*>(sPw + (mt * 16 + g + 8 * (x & 1)) * kSP + kk * 16 +
                                           8 * (x >> 1)) = pa[kk][mt][x];
        }
      } else {
        online_softmax(s, o, m, l, sc);
      }
    } else if constexpr (kSepKV) {
      pair_sync();  // a pair without rows passes its tile barrier too (see pair_sync)
    }
    if constexpr (kSepKV) {
      // Tile nb + 1's page entries go into tile nb - 1's slot (its copies were issued before the
      // top barrier), read by the next K copy after the barrier below; stored only now, so the
      // block-table load has the whole Q.K^T and softmax to land (stored at the top, it stalled
      // every tile: 6% of head 256's samples, v2h ncu s3).
      put_page((it + 1) % kSlots, pf);
      cp_async_wait<0>();  // V of tile nb has landed (for this thread)
      __syncthreads();     // ... for every thread; every warp is done with K; sP is written
      if (nb + 1 < my_hi) load_k(0, (it + 1) % kSlots);
      cp_async_commit();
    }
    if (warp_active) {
      if constexpr (kFp8Regs) {
        // O += P V in fp16 (fp8 values are exact in fp16; P <= 2^kRescaleSlack). ldmatrix.trans on
        // the raw tile treats byte pairs (dims 2c, 2c + 1) as 16-bit elements: each register holds
        // keys 2 tig, 2 tig + 1 of dims 2 g and 2 g + 1, which a byte permute splits into the B
        // fragments of two n8 tiles: "even" (n = g -> dim 2 g) and "odd" (dim 2 g + 1) of a
        // 16-dim block b, kept in o[2 b] and o[2 b + 1]. The epilogue undoes the order.
        // One byte permute gathers both pairs: x = (k0 d0, k0 d1, k1 d0, k1 d1) becomes
        // (k0 d0, k1 d0 | k0 d1, k1 d1), the even dim's keys low and the odd dim's high.
        using H = Elem<__half>;
        auto cvt2 = [&](uint32_t x, uint32_t& even, uint32_t& odd) {
          fp8x4_to_half2x2(__byte_perm(x, 0u, 0x3120u), e5m2, even, odd);
        };
        const uint32_t v_lane_addr = smem_addr(sV_stage(stage)) +
                                     VRaw::at(key0 + (lane & 7) + ((lane >> 3) & 1) * 8, lane >> 4);
#pragma unroll
        for (int kk = 0; kk < kWarpKeys / 16; ++kk) {
          uint32_t a[1][4];
          p_frags<H>(s, kk, a);
#pragma unroll
          for (int b = 0; b < kDv / 16; b += 2) {
            uint32_t r[4];
            const uint32_t addr = VRaw::step(v_lane_addr, kk * 16, b);
            if (b + 1 < kDv / 16) {
              ldsm_x4_t(r, addr);
            } else {
              ldsm_x2_t(r, addr);
            }
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              if (b + h < kDv / 16) {
                uint32_t e0, o0, e1, o1;
                cvt2(r[2 * h], e0, o0);
                cvt2(r[2 * h + 1], e1, o1);
                H::mma(o[0][2 * (b + h)], a[0], e0, e1);
                H::mma(o[0][2 * (b + h) + 1], a[0], o0, o1);
              }
            }
          }
        }
      }
      if constexpr (kSepKV) {
        // This warp's half of O's columns (pv_mma_steps kHalfDims) over the tile's keys: its own
        // keys' probabilities from its registers, the partner's from sP.
        const int v_row = (lane & 7) + ((lane >> 3) & 1) * 8;
        const uint32_t v_lane = smem_addr(sV) + VRows::at(v_row, (lane >> 4) + 4 * half);
        const uint32_t v_tail =
            smem_addr(sV) +
            VRows::at(v_row, (lane >> 4) + 2 * pair_group_tiles(kDvW / 8) + 2 * half);
        constexpr int kSteps = kWarpKeys / 16;
        pv_mma_steps<E, VRows, kSteps, true>(
            o,
            [&](int kk, uint32_t(&a)[kMT][4]) {
#pragma unroll
              for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
                for (int x = 0; x < 4; ++x) a[mt][x] = pa[kk][mt][x];
            },
            VRows::step(v_lane, key0, 0), kMT, VRows::step(v_tail, key0, 0));
        const int pkey0 = kWarpKeys - key0;
        const uint32_t p_lane =
            smem_addr(sP + (pair * 32 + (lane & 15)) * kSP + pkey0 + (lane >> 4) * 8);
        pv_mma_steps<E, VRows, kSteps, true>(
            o,
            [&](int kk, uint32_t(&a)[kMT][4]) {
#pragma unroll
              for (int mt = 0; mt < kMT; ++mt)
                ldsm_x4(a[mt], p_lane + (mt * 16 * kSP + kk * 16) * 2);
            },
            VRows::step(v_lane, pkey0, 0), kMT, VRows::step(v_tail, pkey0, 0));
      } else if constexpr (!kFp8Regs) {
        pv_mma<E, VRows>(
            o, s, smem_addr(sV) + VRows::at(key0 + (lane & 7) + ((lane >> 3) & 1) * 8, lane >> 4),
            kMT);
      }
    }
    if constexpr (!kSepKV) {
      if (packed)
        next = pf;
      else
        put_page((it + kStages) % kSlots, pf);
      __syncthreads();  // this stage, its page slot and the dequantized tile are reused next
    }
  }
  cp_async_wait<0>();  // a CTA with no key tiles still has its Q copy in flight

  // ---- epilogue ----
  // Row sums across the four lanes of a row.
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
  // A pair's row sums: each warp summed its own keys (sX's maxima were last read before the
  // loop's last barrier).
  if constexpr (kSepKV) pair_exchange(l, true);
  float f[kR];  // output factor per row: 1/l (times the V scale)
  // First dim of this warp's O tile j.
  auto o_col = [&](int j) { return kSepKV ? pair_chunk(kDvW / 8, j, half) * 8 : j * 8; };
  // Row r's LSE, computed where it is stored (ptxas hoisted a precomputed array's log2 into every
  // CTA's epilogue, with or without an LSE output).
  auto lse_of = [&](int r) { return row_lse(m[r], l[r]); };
  if constexpr (kWarpsSplitKeys) {
    // Merge the four warps' (m, l, O) states through shared memory (the stages are free now).
    __syncthreads();
    float* s_o = reinterpret_cast<float*>(stage_base);  // [4][16][kDv]
    float* s_m = s_o + 4 * 16 * kDv;                    // [4][16]
    float* s_l = s_m + 4 * 16;                          // [4][16]
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = g + 8 * i;
      if (tig == 0) {
        s_m[warp * 16 + r] = m[i];
        s_l[warp * 16 + r] = l[i];
      }
      if constexpr (kFp8Regs) {  // dims 16 b + 4 tig + {0, 1, 2, 3} (see the PV loop)
#pragma unroll
        for (int b = 0; b < kDv / 16; ++b)
          *reinterpret_cast<float4*>(s_o + (warp * 16 + r) * kDv + b * 16 + 4 * tig) =
              make_float4(o[0][2 * b][2 * i], o[0][2 * b + 1][2 * i], o[0][2 * b][2 * i + 1],
                          o[0][2 * b + 1][2 * i + 1]);
      } else {
#pragma unroll
        for (int j = 0; j < kDv / 8; ++j)
          *reinterpret_cast<float2*>(s_o + (warp * 16 + r) * kDv + j * 8 + 2 * tig) =
              make_float2(o[0][j][2 * i], o[0][j][2 * i + 1]);
      }
    }
    __syncthreads();
    // Each thread now owns one row r and a slice of its columns.
    const int r = tid / 8, part = tid % 8;
    constexpr int kCols = kDv / 8;
    float mw[4], M = -INFINITY;
#pragma unroll
    for (int w = 0; w < 4; ++w) M = fmaxf(M, mw[w] = s_m[w * 16 + r]);
    const float M_use = M == -INFINITY ? 0.f : M;
    float L = 0.f, wt[4];
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      wt[w] = exp2f(mw[w] - M_use);
      L += s_l[w * 16 + r] * wt[w];
    }
    const float inv = L > 0.f ? 1.f / L : 0.f;
    // row_lse(M, L) written out: through the helper ptxas scheduled this form differently, and
    // the fp8 decode rows at page 16 ran up to 2% slower (s9 r9).
    const float lse = L > 0.f ? (M + __log2f(L)) * kLn2 : -INFINITY;
    const int pr = row0 + r;
    if (pr >= rows) return;
    const int t = p.gdiv.div(pr), tok = q_start + t, h = kvh * G + p.gdiv.mod(pr, t);
    float acc[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      float v = 0.f;
#pragma unroll
      for (int w = 0; w < 4; ++w) v += s_o[(w * 16 + r) * kDv + part * kCols + c] * wt[w];
      acc[c] = v * inv;
    }
    const int nsplit = kRagged ? ragged_slots()[2] : p.num_splits;
    // A ragged plan's combine learns each token's split count here (one writer per token).
    if (kRagged && split == 0 && h == 0 && part == 0) p.ws_nsplit[tok] = nsplit;
    if (nsplit == 1) {
      T* out = static_cast<T*>(p.out) + tok * p.o_stride_token + h * p.o_stride_head + part * kCols;
#pragma unroll
      for (int c = 0; c < kCols; c += 2)
        *reinterpret_cast<uint32_t*>(out + c) = E::pack(acc[c] * v_scale, acc[c + 1] * v_scale);
      if (p.lse && part == 0) p.lse[int64_t(tok) * p.num_heads + h] = lse;
    } else {
      const int64_t row = (int64_t(split) * p.total_q_capacity + tok) * p.num_heads + h;
      float* out = p.ws_o + row * kDv + part * kCols;
#pragma unroll
      for (int c = 0; c < kCols; c += 2)
        *reinterpret_cast<float2*>(out + c) = make_float2(acc[c] * v_scale, acc[c + 1] * v_scale);
      if (part == 0) p.ws_lse[row] = lse;
    }
    return;
  } else {
#pragma unroll
    for (int r = 0; r < kR; ++r) f[r] = (l[r] > 0.f ? 1.f / l[r] : 0.f) * v_scale;
  }
  if (p.num_splits == 1) {
    // O goes through shared memory (Q and the stages are free once every warp is past this
    // barrier; cp_async_wait<0> above emptied the copies) and leaves as whole-row 16-byte stores:
    // per-fragment 4-byte stores backed up the LSU queue for 9% of a 1k prefill's stall samples
    // (v2h, ncu s3).
    static_assert(kBM * kSO * 2 <= flash_smem_bytes(kDqk, kDv, kFp8, false), "the O tile fits");
    T* sO = reinterpret_cast<T*>(smem);
    __syncthreads();
    if (warp_active) {
#pragma unroll
      for (int r = 0; r < kR; ++r) {
        const int mt = r / 2, i = r % 2;
        const int row = wrow0 + mt * 16 + g + 8 * i;
#pragma unroll
        for (int j = 0; j < kDvW / 8; ++j)
          *reinterpret_cast<uint32_t*>(sO + row * kSO + o_col(j) + 2 * tig) =
              E::pack(o[mt][j][2 * i] * f[r], o[mt][j][2 * i + 1] * f[r]);
      }
#pragma unroll
      for (int r = 0; r < kR; ++r) {
        const int pr = row0 + wrow0 + (r / 2) * 16 + g + 8 * (r % 2);
        if (p.lse && tig == 0 && half == 0 && pr < rows) {
          const int t = p.gdiv.div(pr);
          p.lse[int64_t(q_start + t) * p.num_heads + kvh * G + p.gdiv.mod(pr, t)] = lse_of(r);
        }
      }
    }
    __syncthreads();
    store_o_tile<kBM, kDv, kSO>(p, w, sO, tid);
    return;
  }
  if (!warp_active) return;
#pragma unroll
  for (int r = 0; r < kR; ++r) {  // split partials: fp32 rows of the workspace
    const int mt = r / 2, i = r % 2;
    const int pr = row0 + wrow0 + mt * 16 + g + 8 * i;
    if (pr >= rows) continue;
    const int t = p.gdiv.div(pr), tok = q_start + t, h = kvh * G + p.gdiv.mod(pr, t);
    const int64_t row = (int64_t(split) * p.total_q_capacity + tok) * p.num_heads + h;
    float* out = p.ws_o + row * kDv;
#pragma unroll
    for (int j = 0; j < kDvW / 8; ++j) {
      *reinterpret_cast<float2*>(out + o_col(j) + 2 * tig) =
          make_float2(o[mt][j][2 * i] * f[r], o[mt][j][2 * i + 1] * f[r]);
    }
    if (tig == 0 && half == 0) p.ws_lse[row] = lse_of(r);
  }
}

// Merges the split partials of one (token, head) row per CTA: out = sum_s exp(lse_s - lse) O_s.
// Parallel over the splits (thread s reads split s's LSE; warp w sums splits w, w + 4, ...), so
// its latency does not grow with the split count: a serial loop over 30-60 splits cost ~0.5 us
// per split at 1x32k decode (v2e), a third of the whole call. A warp loads the partials of up to
// kBatch splits before it adds any (a loop that first tested each split's weight waited one L2
// round trip per split: 7 us of a 57 us 1x32k call, ncu s3).
template <typename T, bool kRagged, int kBatch>
__global__ void __launch_bounds__(kThreads) flash_combine_kernel(const FlashParams p) {
  static_assert(kMaxSplits <= kThreads, "one thread per split's LSE");
  constexpr int kMaxHeadV = 512;
  using E = Elem<T>;
  __shared__ float s_w[kMaxSplits];
  __shared__ float s_red[2][kThreads / 32];
  __shared__ __align__(16) float s_acc[4][kMaxHeadV];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // The next layer's decode kernel may launch now and read its metadata; it waits for this
  // kernel's completion before it touches anything this kernel reads or writes.
  pdl_launch_dependents();
  // One part of a batch (the backend's part_runs) combines its own tokens, the first of them at
  // cu_seqlens_q[0]; row < total_q_capacity x num_heads: the workspace holds it.
  const int64_t row = int64_t(p.cu_seqlens_q[0]) * p.num_heads + blockIdx.x;
  const int tok = int(row / p.num_heads);
  if (tok >= p.cu_seqlens_q[p.num_seqs]) return;  // metadata, not the flash kernel's results
  pdl_wait_primary();
  // A ragged plan's rows each have their own count (one more round trip before the partials; a
  // speculative read of num_splits partials would read slots no split wrote).
  const int S = kRagged ? p.ws_nsplit[tok] : p.num_splits;
  if (kRagged && S == 1) return;  // an unsplit sequence: the flash kernel wrote its rows
  const int64_t split_stride = int64_t(p.total_q_capacity) * p.num_heads;
  auto load_batch = [&](int d, int sp0, float4(&v)[kBatch]) {
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int sp = sp0 + 4 * i;
      v[i] =
          sp < S && d < p.head_v
              ? *reinterpret_cast<const float4*>(p.ws_o + (sp * split_stride + row) * p.head_v + d)
              : make_float4(0.f, 0.f, 0.f, 0.f);
    }
  };
  const float mine = tid < S ? p.ws_lse[tid * split_stride + row] : -INFINITY;
  // The first batch of partials is loaded with the LSEs, not after them (their weights are needed
  // only to add them): one L2 round trip fewer on the path of every decode with splits.
  float4 first[kBatch];
  load_batch(lane * 4, warp, first);
  float mx = mine;
#pragma unroll
  for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
  if (lane == 0) s_red[0][warp] = mx;
  __syncthreads();
  mx = fmaxf(fmaxf(s_red[0][0], s_red[0][1]), fmaxf(s_red[0][2], s_red[0][3]));
  const float e = mx != -INFINITY && tid < S ? __expf(mine - mx) : 0.f;
  float sum = e;
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) s_red[1][warp] = sum;
  __syncthreads();
  sum = s_red[1][0] + s_red[1][1] + s_red[1][2] + s_red[1][3];
  const float lse = mx == -INFINITY ? -INFINITY : mx + __logf(sum);
  if (tid < S) s_w[tid] = mx == -INFINITY ? 0.f : e / sum;
  __syncthreads();
  for (int d = lane * 4; d < p.head_v; d += 128) {
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int sp0 = warp; sp0 < S; sp0 += 4 * kBatch) {
      float4 v[kBatch];
      if (d == lane * 4 && sp0 == warp) {
#pragma unroll
        for (int i = 0; i < kBatch; ++i) v[i] = first[i];
      } else {
        load_batch(d, sp0, v);
      }
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        const int sp = sp0 + 4 * i;
        const float w = sp < S ? s_w[sp] : 0.f;
        if (w != 0.f) {  // an empty split (or a fully masked row) adds nothing
          acc.x += w * v[i].x;
          acc.y += w * v[i].y;
          acc.z += w * v[i].z;
          acc.w += w * v[i].w;
        }
      }
    }
    *reinterpret_cast<float4*>(&s_acc[warp][d]) = acc;
  }
  __syncthreads();
  const int h = int(row % p.num_heads);
  T* out = static_cast<T*>(p.out) + int64_t(tok) * p.o_stride_token + h * p.o_stride_head;
  for (int d = tid * 2; d < p.head_v; d += 2 * kThreads) {
    const float a = s_acc[0][d] + s_acc[1][d] + s_acc[2][d] + s_acc[3][d];
    const float b = s_acc[0][d + 1] + s_acc[1][d + 1] + s_acc[2][d + 1] + s_acc[3][d + 1];
    *reinterpret_cast<uint32_t*>(out + d) = E::pack(a, b);
  }
  if (p.lse && tid == 0) p.lse[row] = lse;
}

}  // namespace attnkit::cuda_flash
