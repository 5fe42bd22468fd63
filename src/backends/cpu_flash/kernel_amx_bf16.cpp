// AMX variant (Sapphire Rapids+; AMX-TILE, AMX-BF16, AVX512_BF16 and AVX512_VBMI, and the OS must
// grant the tile state): the AVX512_BF16 variant's paths (path_bf16.hpp, compiled here with VBMI,
// which the few-rows form's fp8 loader uses) plus AMX tiles for both products of larger bf16-path
// items (PathAmx).
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "backends/cpu_flash/kernel.hpp"

#if defined(__x86_64__)
#include <immintrin.h>  // before the namespace that includes simd_avx512.hpp

// The variant's own code is built for its ISA from here to pop_options (kernel.hpp says why
// the shared headers above must not be).
#pragma GCC push_options
#pragma GCC target( \
    "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx512vbmi,amx-tile,amx-bf16,fma,f16c")
#define ATTNKIT_CPU_FLASH_VBMI 1  // path_bf16.hpp's VBMI forms

namespace attnkit::cpu_flash::isa_amx_bf16 {
#include "backends/cpu_flash/simd_avx512.hpp"
// few_rows.hpp needs Simd
#include "backends/cpu_flash/few_rows.hpp"
#include "backends/cpu_flash/path_bf16.hpp"

// GCC's _tile_loadd is asm without a memory operand (its _tile_stored clobbers memory): the
// compiler may move the plain stores that fill a tile's memory (packed K/V tiles, Q^T, P's A
// tiles, zero-padded V groups) past the loads that read it. A compiler barrier after the stores,
// before a product's first tile load, keeps them in order.
inline void tile_memory_written() { asm volatile("" ::: "memory"); }

// AMX: C[M][N] (+)= A[M][K pairs] x B[K pairs][N] in 16 x 16 fp32 tiles (tmm0-3), A tiles
// 16 rows x 16 pairs (tmm4-5), B tiles 16 pairs x 16 columns (tmm6-7). The kernel's layouts are
// already AMX's: Q/P rows are bf16 row-major, Kt/Vp are the pair-interleaved ("VNNI") B form.
// M, N, K multiples of 16.
template <int RM, int RN>
inline void amx_block(int K, const uint32_t* A, int64_t lda, const uint32_t* B, int64_t ldb,
                      float* C, int64_t ldc, bool load_c) {
  const int64_t sa = lda * 4, sb = ldb * 4, sc = ldc * 4;
  if (load_c) {
    _tile_loadd(0, C, sc);
    if constexpr (RN > 1) _tile_loadd(1, C + 16, sc);
    if constexpr (RM > 1) _tile_loadd(2, C + 16 * ldc, sc);
    if constexpr (RM > 1 && RN > 1) _tile_loadd(3, C + 16 * ldc + 16, sc);
  } else {
    _tile_zero(0);
    if constexpr (RN > 1) _tile_zero(1);
    if constexpr (RM > 1) _tile_zero(2);
    if constexpr (RM > 1 && RN > 1) _tile_zero(3);
  }
  for (int k = 0; k < K; k += 16) {
    _tile_loadd(4, A + k, sa);
    _tile_loadd(6, B + k * ldb, sb);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (RN > 1) {
      _tile_loadd(7, B + k * ldb + 16, sb);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (RM > 1) {
      _tile_loadd(5, A + 16 * lda + k, sa);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (RN > 1) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, C, sc);
  if constexpr (RN > 1) _tile_stored(1, C + 16, sc);
  if constexpr (RM > 1) _tile_stored(2, C + 16 * ldc, sc);
  if constexpr (RM > 1 && RN > 1) _tile_stored(3, C + 16 * ldc + 16, sc);
}

struct TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tile configuration is per thread; loaded at the start of every AMX work item (cheap next to
// an item), so other AMX users on the same thread cannot leave a different shape behind.
inline void amx_configure() {
  alignas(64) TileConfig c;
  for (int i = 0; i < 8; ++i) c.colsb[i] = 64, c.rows[i] = 16;
  // GCC 12 may drop the stores above: ldtilecfg's memory operand is not visible to it.
  asm volatile("" ::"m"(c) : "memory");
  _tile_loadconfig(&c);
}

inline void gemm_amx(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                     int64_t ldb, float* C, int64_t ldc, bool load_c) {
  tile_memory_written();
  for (int m0 = 0; m0 < M; m0 += 32) {
    const bool two_m = M - m0 >= 32;
    for (int n0 = 0; n0 < N; n0 += 32) {
      const bool two_n = N - n0 >= 32;
      const uint32_t* a = A + m0 * lda;
      const uint32_t* b = B + n0;
      float* c = C + m0 * ldc + n0;
      if (two_m && two_n)
        amx_block<2, 2>(K, a, lda, b, ldb, c, ldc, load_c);
      else if (two_m)
        amx_block<2, 1>(K, a, lda, b, ldb, c, ldc, load_c);
      else if (two_n)
        amx_block<1, 2>(K, a, lda, b, ldb, c, ldc, load_c);
      else
        amx_block<1, 1>(K, a, lda, b, ldb, c, ldc, load_c);
    }
  }
}

// The AMX path: the bf16 path's packing and softmax, AMX products; 16-row, 32-key granularity.
// Per block of 16 query rows (items of up to 128 rows), scores come transposed, S^T = K Q^T, with
// the K rows loaded as A tiles straight from the cache (16 keys of a block at stride_token): no K
// packing; and for up to 32 rows P V takes the V rows as B tiles straight from the cache too
// (direct_pv): no V packing.
struct PathAmx : PathBf16 {
  static constexpr int kRowAlign = 16, kKeyAlign = 32;
  static constexpr int kFewRows = 0;  // run_item_amx sends decode-sized items to PathBf16
  static int few_max(const AttentionArgs&, bool) { return 0; }
  static constexpr bool kDirectScores = true;
  static void gemm(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c) {
    gemm_amx(M, N, K, A, lda, B, ldb, C, ldc, load_c);
  }
  // qt[p][r] = q pair p of row r (the B operand of S^T).
  static void pack_qt(const uint32_t* qs, int rows, int pairs, uint32_t* qt) {
    for (int r = 0; r < rows; ++r)
      for (int p = 0; p < pairs; ++p) qt[int64_t(p) * rows + r] = qs[int64_t(r) * pairs + p];
  }
  // s[16 rows][ntp] for keys n0.. (n0 % 16 == 0, block_size % 16 == 0: each 16-key group is
  // contiguous in one block; slots past nt inside that block are read but masked later). Two
  // groups at a time, and every tile register alternates between two with the pair step, so
  // the next step's loads do not wait for this step's products. c16 holds 2 tiles. tick() before
  // each 64 dims of a pair of groups (the caller's prefetch slices).
  template <class Tick>
  static void direct_scores(const CacheRows& rows, int n0, int nt, int ntp, int d,
                            const uint32_t* qt, int rows_c, float* s, float* c16, Tick&& tick) {
    const int pairs = d / 2;
    const int64_t sq = int64_t(rows_c) * 4, sk = rows.s_token;
    tile_memory_written();  // qt (pack_qt)
    for (int kg = 0; kg < ntp; kg += 32) {
      const bool two = kg + 16 < nt;  // the second group has a key
      if (kg >= nt) {  // no key of these groups exists: finite filler, masked by the softmax
        for (int r = 0; r < rows_c; ++r) std::memset(s + int64_t(r) * ntp + kg, 0, 128);
        continue;
      }
      const uint8_t* k0 = rows.row(n0 + kg);
      const uint8_t* k1 = two ? rows.row(n0 + kg + 16) : k0;
      _tile_zero(0);
      _tile_zero(1);
      for (int p = 0; p < pairs; p += 32) {  // steps p (registers 2, 4, 6) and p + 16 (3, 5, 7)
        tick();
        _tile_loadd(2, qt + int64_t(p) * rows_c, sq);
        _tile_loadd(4, k0 + int64_t(p) * 4, sk);
        _tile_dpbf16ps(0, 4, 2);
        if (two) {
          _tile_loadd(6, k1 + int64_t(p) * 4, sk);
          _tile_dpbf16ps(1, 6, 2);
        }
        if (p + 16 < pairs) {
          _tile_loadd(3, qt + int64_t(p + 16) * rows_c, sq);
          _tile_loadd(5, k0 + int64_t(p + 16) * 4, sk);
          _tile_dpbf16ps(0, 5, 3);
          if (two) {
            _tile_loadd(7, k1 + int64_t(p + 16) * 4, sk);
            _tile_dpbf16ps(1, 7, 3);
          }
        }
      }
      _tile_stored(0, c16, 64);
      if (two) _tile_stored(1, c16 + 256, 64);
      for (int h = 0; h < 2; ++h) {
        if (kg + 16 * h >= ntp) break;
        if (h == 1 && !two) {
          for (int r = 0; r < rows_c; ++r) std::memset(s + int64_t(r) * ntp + kg + 16, 0, 64);
          break;
        }
        const uint32_t* src[16];
        for (int i = 0; i < 16; ++i)
          src[i] = reinterpret_cast<const uint32_t*>(c16 + h * 256 + i * 16);
        Simd::transpose(src, 0, reinterpret_cast<uint32_t*>(s + kg + 16 * h), ntp);
      }
    }
  }
  // Whether x[0..n) (n a multiple of 16) holds a NaN: 16 at a time (a scalar scan took ~6% of a
  // 32-row item's profile samples in L2).
  static bool any_nan(const float* x, int n) {
    __mmask16 m = 0;
    for (int i = 0; i < n; i += 16) {
      const __m512 v = _mm512_loadu_ps(x + i);
      m |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    return m != 0;
  }
  // O[16][dv] += P[16][nt] V[nt][dv] with V rows as they lie in the cache (no packing). A B
  // tile is 16 keys x 32 dims of V as stored: dword j = dims (2j, 2j + 1) of one key. It is
  // multiplied once by P in the low halves of the A dwords (sums the even dims) and once by P
  // in the high halves (odd dims): twice the tile products of packed V, no V pass through
  // registers. O's dims are therefore kept permuted per 32: 16 even, then 16 odd
  // (unpermute_o restores them). Groups of 16 keys that are not one contiguous run in the
  // cache (block edge, end of the range) are copied to `vtail` first, zero-padded: slots past
  // the sequence may hold anything (NaN times a zero probability is NaN). `ap` holds the A
  // tiles ([group][even/odd][16 rows][16 dwords]); its rows from rows_n on are padding, left as
  // they are: a row of A reaches only the same row of O, and O's padding rows are never read.
  // tick() before each group's A tiles and each group's products into 64 dims of O.
  template <class Tick>
  static void direct_pv(const CacheRows& rows, int n0, int nt, int dv, const float* p, int ntp,
                        int rows_n, uint32_t* ap, uint16_t* vtail, float* o, Tick&& tick) {
    const int groups = (nt + 15) / 16;
    const uint8_t* vg[kKeyTile / 16];
    int64_t vstride[kKeyTile / 16];
    for (int g = 0; g < groups; ++g) {
      tick();
      const int k0 = n0 + g * 16, kn = std::min(16, nt - g * 16);
      for (int r = 0; r < rows_n; ++r) {
        const __m512i b = _mm512_cvtepu16_epi32(
            (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(p + int64_t(r) * ntp + g * 16)));
        _mm512_storeu_si512(ap + ((g * 2) * 16 + r) * 16, b);
        _mm512_storeu_si512(ap + ((g * 2 + 1) * 16 + r) * 16, _mm512_slli_epi32(b, 16));
      }
      if (kn == 16 && rows.slot_of(k0) + 16 <= rows.block_size) {
        vg[g] = rows.row(k0);
        vstride[g] = rows.s_token;
      } else {
        uint16_t* t = vtail + int64_t(g) * 16 * dv;
        for (int i = 0; i < 16; ++i) {
          if (i < kn)
            std::memcpy(t + int64_t(i) * dv, rows.row(k0 + i), size_t(dv) * 2);
          else
            std::memset(t + int64_t(i) * dv, 0, size_t(dv) * 2);
        }
        vg[g] = reinterpret_cast<const uint8_t*>(t);
        vstride[g] = int64_t(dv) * 2;
      }
    }
    tile_memory_written();  // ap, vtail
    const int64_t so = int64_t(dv) * 4;
    for (int c = 0; c < dv; c += 64) {
      const bool two = c + 64 <= dv;  // two 32-dim chunks (tiles 0-3), else one (0-1)
      float* oc = o + c;
      _tile_loadd(0, oc, so);
      _tile_loadd(1, oc + 16, so);
      if (two) {
        _tile_loadd(2, oc + 32, so);
        _tile_loadd(3, oc + 48, so);
      }
      for (int g = 0; g < groups; ++g) {
        tick();
        _tile_loadd(4, ap + g * 2 * 256, 64);
        _tile_loadd(5, ap + (g * 2 + 1) * 256, 64);
        _tile_loadd(6, vg[g] + int64_t(c) * 2, vstride[g]);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 5, 6);
        if (two) {
          _tile_loadd(7, vg[g] + int64_t(c) * 2 + 64, vstride[g]);
          _tile_dpbf16ps(2, 4, 7);
          _tile_dpbf16ps(3, 5, 7);
        }
      }
      _tile_stored(0, oc, so);
      _tile_stored(1, oc + 16, so);
      if (two) {
        _tile_stored(2, oc + 32, so);
        _tile_stored(3, oc + 48, so);
      }
    }
  }
};

}  // namespace attnkit::cpu_flash::isa_amx_bf16

#define ATTNKIT_ISA_NS isa_amx_bf16
#define ATTNKIT_CPU_FLASH_FEW_ROWS 1
#define ATTNKIT_CPU_FLASH_BF16_PATH 1
#define ATTNKIT_CPU_FLASH_AMX_PATH 1
#include "backends/cpu_flash/kernel_impl.hpp"

namespace attnkit::cpu_flash {
const KernelFns& kernels_amx_bf16() {
  static const KernelFns f{Isa::kAmxBf16, true, &isa_amx_bf16::run_item_amx};
  return f;
}
}  // namespace attnkit::cpu_flash

#pragma GCC pop_options

#else  // not x86-64: isa_supported() never selects this variant
namespace attnkit::cpu_flash {
const KernelFns& kernels_amx_bf16() { return kernels_scalar(); }
}  // namespace attnkit::cpu_flash
#endif
