// AVX-512 variant with AVX512_BF16 (Cooper Lake, Sapphire Rapids, Zen 4+): the fp32 path plus a
// bf16 path for bf16 queries over a bf16 cache, where both products run on vdpbf16ps
// (32 bf16 multiply-adds per instruction into fp32), and with AMX (Sapphire Rapids+) both
// products on AMX tiles (the kAmxBf16 variant; the OS must grant the tile state).
#include <cstring>

#include "backends/cpu_flash/kernel.hpp"

#if defined(__x86_64__)

namespace attnkit::cpu_flash::isa_avx512_bf16 {
#include "backends/cpu_flash/simd_avx512.hpp"

// One A element = one bf16 pair (a dword); dpbf16 sums the two products of each pair.
struct OpBf16 {
  using A = uint32_t;
  using B = uint32_t;
  using AVec = __m512i;
  using BVec = __m512i;
  static constexpr int MR = Simd::kMR, NR = Simd::kNR;
  static AVec bcast_a(const uint32_t* p) { return _mm512_set1_epi32(int(*p)); }
  static BVec load_b(const uint32_t* p) { return _mm512_loadu_si512(p); }
  static __m512 madd(__m512 acc, AVec a, BVec b) {
    return _mm512_dpbf16_ps(acc, (__m512bh)b, (__m512bh)a);
  }
};

alignas(64) inline const uint16_t kZeroRow[1024] = {};

void gemm_dispatch(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c);

struct PathBf16 {
  using Op = OpBf16;
  using PElem = uint16_t;
  static constexpr int kPack = 2;
  static constexpr int kRowAlign = 1, kKeyAlign = 16;
  static constexpr bool kDirectScores = false;
  static void gemm(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c) {
    gemm_dispatch(M, N, K, A, lda, B, ldb, C, ldc, load_c);
  }
  static void load_q(const void* src, DType, int d, uint32_t* dst) {
    std::memcpy(dst, src, size_t(d) * 2);
  }
  // Kt[d / 2][ntp] dwords: dword (p, n) = (K[n][2p], K[n][2p + 1]). Read straight from the cache.
  static void pack_k(const AttentionArgs&, const CacheRows& rows, int n0, int nt, int ntp, int d,
                     float*, uint32_t* kt) {
    const int pairs = d / 2;
    const uint32_t* r[16];
    for (int nb = 0; nb < ntp; nb += 16) {
      for (int i = 0; i < 16; ++i)
        r[i] = reinterpret_cast<const uint32_t*>(
            nb + i < nt ? rows.row(n0 + nb + i) : reinterpret_cast<const uint8_t*>(kZeroRow));
      int c = 0;
      for (; c + 16 <= pairs; c += 16) Simd::transpose(r, c, kt + int64_t(c) * ntp + nb, ntp);
      for (; c < pairs; ++c)
        for (int i = 0; i < 16; ++i) kt[int64_t(c) * ntp + nb + i] = r[i][c];
    }
  }
  // Vp[ntp / 2][dv] dwords: dword (p, j) = (V[2p][j], V[2p + 1][j]).
  static void pack_v(const AttentionArgs&, const CacheRows& rows, int n0, int nt, int ntp, int dv,
                     float*, uint32_t* vp) {
    alignas(64) static constexpr uint16_t kLo[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                     37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                     11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i lo = _mm512_load_si512(kLo);
    const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    for (int n = 0; n < ntp; n += 2) {
      const auto* a = reinterpret_cast<const uint16_t*>(
          n < nt ? rows.row(n0 + n) : reinterpret_cast<const uint8_t*>(kZeroRow));
      const auto* b = reinterpret_cast<const uint16_t*>(
          n + 1 < nt ? rows.row(n0 + n + 1) : reinterpret_cast<const uint8_t*>(kZeroRow));
      uint32_t* dst = vp + int64_t(n / 2) * dv;
      int j = 0;
      for (; j + 32 <= dv; j += 32) {
        const __m512i va = _mm512_loadu_si512(a + j), vb = _mm512_loadu_si512(b + j);
        _mm512_storeu_si512(dst + j, _mm512_permutex2var_epi16(va, lo, vb));
        _mm512_storeu_si512(dst + j + 16, _mm512_permutex2var_epi16(va, hi, vb));
      }
      for (; j < dv; ++j) dst[j] = uint32_t(a[j]) | (uint32_t(b[j]) << 16);
    }
  }
  // fp8 rows -> bf16 rows (exact: e4m3/e5m2 values, subnormals included, are bf16 normals),
  // zero rows from nt to ntp.
  static void stage_rows(KvCacheDType dt, const CacheRows& rows, int n0, int nt, int ntp, int d,
                         uint16_t* dst) {
    alignas(64) float tmp[16];
    for (int n = 0; n < ntp; ++n) {
      uint16_t* o = dst + int64_t(n) * d;
      if (n >= nt) {
        std::memset(o, 0, size_t(d) * 2);
        continue;
      }
      const uint8_t* src = rows.row(n0 + n);
      for (int i = 0; i < d; i += 16) {
        if (dt == KvCacheDType::kFp8E4M3)
          Simd::cvt_e4m3(src + i, tmp);
        else
          Simd::cvt_e5m2(src + i, tmp);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + i),
                            (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(tmp)));
      }
    }
  }
  static void store_p(const float* p, int n, uint16_t* dst) {
    for (int j = 0; j < n; j += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j),
                          (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(p + j)));
  }
};

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
  _tile_loadconfig(&c);
}

inline void gemm_amx(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                     int64_t ldb, float* C, int64_t ldc, bool load_c) {
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
// With at most 16 query rows (decode), scores come transposed, S^T = K Q^T, with the K rows
// loaded as A tiles straight from the cache (16 keys of a block at stride_token): no K packing.
struct PathAmx : PathBf16 {
  static constexpr int kRowAlign = 16, kKeyAlign = 32;
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
  // contiguous in one block; slots past nt inside that block are read but masked later).
  static void direct_scores(const CacheRows& rows, int n0, int nt, int ntp, int d,
                            const uint32_t* qt, int rows_c, float* s, float* c16) {
    const int pairs = d / 2;
    for (int kg = 0; kg < ntp; kg += 16) {
      if (kg >= nt) {  // no key of this group exists: finite filler, masked by the softmax
        for (int r = 0; r < rows_c; ++r) std::memset(s + int64_t(r) * ntp + kg, 0, 64);
        continue;
      }
      const uint8_t* k = rows.row(n0 + kg);
      _tile_zero(0);
      for (int p = 0; p < pairs; p += 16) {
        _tile_loadd(4, k + int64_t(p) * 4, rows.s_token);
        _tile_loadd(6, qt + int64_t(p) * rows_c, int64_t(rows_c) * 4);
        _tile_dpbf16ps(0, 4, 6);
      }
      _tile_stored(0, c16, 64);
      const uint32_t* src[16];
      for (int i = 0; i < 16; ++i) src[i] = reinterpret_cast<const uint32_t*>(c16 + i * 16);
      Simd::transpose(src, 0, reinterpret_cast<uint32_t*>(s + kg), ntp);
    }
  }
};

}  // namespace attnkit::cpu_flash::isa_avx512_bf16

#define ATTNKIT_ISA_NS isa_avx512_bf16
#define ATTNKIT_CPU_FLASH_BF16_PATH 1
#define ATTNKIT_CPU_FLASH_AMX_PATH 1
#include "backends/cpu_flash/kernel_impl.hpp"

namespace attnkit::cpu_flash::isa_avx512_bf16 {
void gemm_dispatch(int M, int N, int K, const uint32_t* A, int64_t lda, const uint32_t* B,
                   int64_t ldb, float* C, int64_t ldc, bool load_c) {
  gemm<OpBf16>(M, N, K, A, lda, B, ldb, C, ldc, load_c);
}
}  // namespace attnkit::cpu_flash::isa_avx512_bf16

namespace attnkit::cpu_flash {
const KernelFns& kernels_avx512_bf16() {
  static const KernelFns f{Isa::kAvx512Bf16, true, &isa_avx512_bf16::run_item};
  return f;
}
const KernelFns& kernels_amx_bf16() {
  static const KernelFns f{Isa::kAmxBf16, true, &isa_avx512_bf16::run_item_amx};
  return f;
}
}  // namespace attnkit::cpu_flash

#else  // not x86-64: isa_supported() never selects this variant
namespace attnkit::cpu_flash {
const KernelFns& kernels_avx512_bf16() { return kernels_scalar(); }
const KernelFns& kernels_amx_bf16() { return kernels_scalar(); }
}  // namespace attnkit::cpu_flash
#endif
