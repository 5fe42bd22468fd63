// Session 58: where the AMX item's tile loads find their K/V rows, over 4 KiB groups of 16 keys
// at shuffled places (as a page-16 cache's blocks lie). The kernel's two products for 8 query
// rows (head 128, one 64-key tile: direct scores, then direct P.V), with the next tile's lines
// prefetched as the kernel does (t1, in slices spread over the products) or otherwise, and a
// plain read of the same groups. One thread. Build: g++ -O2 -mamx-tile -mamx-bf16 -mavx512f.
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <random>
#include <vector>
struct Cfg {
  uint8_t palette = 1, start = 0, res[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
alignas(64) static uint8_t QT[64 * 64], S[2 * 1024], AP[8 * 1024], O[16 * 512];
alignas(64) static Cfg c16;
constexpr size_t kGroup = 16 * 256;  // 16 keys of head 128 bf16: one page-16 block's head
struct Tile {
  const uint8_t* k[4];
  const uint8_t* v[4];
};
enum Pf {
  kSliceT1,
  kSliceT0,
  kGroupT0,
  kGroupT0SliceT1,
  kGroup2T0,
  kGroupT0Sparse4,
  kGroupT0Heads8,
  kCount
};
const char* kNames[] = {"slices t1 (kernel)",        "slices t0",   "group t0",
                        "group t0 + slices t1",      "2 groups t0", "group t0 + 1/4 lines t1",
                        "group t0 + 8 lines/page t1"};
template <_mm_hint H>
static inline void pf_lines(const uint8_t* p, int lines) {
  for (int o = 0; o < lines; ++o) _mm_prefetch(reinterpret_cast<const char*>(p + 64 * o), H);
}
// Lines of tile t as 8 groups of 64 lines: group g < 4 is K, else V.
static inline const uint8_t* group_of(const Tile& t, int g) { return g < 4 ? t.k[g] : t.v[g - 4]; }
struct Slicer {  // the next tile's 512 lines, `per` lines a step
  const Tile* t;
  int line = 0;
  template <_mm_hint H>
  void step(int per) {
    for (int i = 0; i < per && line < 512; ++i, ++line)
      _mm_prefetch(reinterpret_cast<const char*>(group_of(*t, line / 64) + 64 * (line % 64)), H);
  }
};
static void tile(const Tile& t, const Tile& nx, Pf pf) {
  Slicer sl{&nx};
  auto step = [&] {  // 48 product steps a tile: 11 lines each covers the 512
    if (pf == kSliceT1 || pf == kGroupT0SliceT1) sl.step<_MM_HINT_T1>(11);
    if (pf == kSliceT0) sl.step<_MM_HINT_T0>(11);
    if (pf == kGroupT0Sparse4)
      for (int i = 0; i < 3 && sl.line < 512; ++i, sl.line += 4)
        _mm_prefetch(
            reinterpret_cast<const char*>(group_of(nx, sl.line / 64) + 64 * (sl.line % 64)),
            _MM_HINT_T1);
  };
  if (pf == kGroupT0Heads8)
    for (int g = 0; g < 8; ++g) pf_lines<_MM_HINT_T1>(group_of(nx, g), 8);
  // g: the group whose loads come next (0-3 K, 4-7 V, 8+ the next tile's)
  auto near = [&](int g) {
    if (pf == kGroupT0 || pf == kGroupT0SliceT1 || pf == kGroup2T0 || pf == kGroupT0Sparse4 ||
        pf == kGroupT0Heads8) {
      const int a = g + 1;  // one group ahead
      const Tile& tt = a < 8 ? t : nx;
      pf_lines<_MM_HINT_T0>(group_of(tt, a % 8), 64);
    }
    if (pf == kGroup2T0) {
      const int a = g + 2;
      const Tile& tt = a < 8 ? t : nx;
      pf_lines<_MM_HINT_T0>(group_of(tt, a % 8), 64);
    }
  };
  for (int kg = 0; kg < 4; kg += 2) {
    const uint8_t* k0 = t.k[kg];
    const uint8_t* k1 = t.k[kg + 1];
    near(kg);
    near(kg + 1);
    _tile_zero(0);
    _tile_zero(1);
    for (int p = 0; p < 64; p += 32) {
      _tile_loadd(2, QT + p * 64, 64);
      _tile_loadd(4, k0 + p * 4, 256);
      _tile_dpbf16ps(0, 4, 2);
      step();
      _tile_loadd(6, k1 + p * 4, 256);
      _tile_dpbf16ps(1, 6, 2);
      step();
      _tile_loadd(3, QT + (p + 16) * 64, 64);
      _tile_loadd(5, k0 + (p + 16) * 4, 256);
      _tile_dpbf16ps(0, 5, 3);
      step();
      _tile_loadd(7, k1 + (p + 16) * 4, 256);
      _tile_dpbf16ps(1, 7, 3);
      step();
    }
    _tile_stored(0, S, 64);
    _tile_stored(1, S + 1024, 64);
  }
  for (int c = 0; c < 128; c += 64) {
    uint8_t* oc = O + c * 4;
    _tile_loadd(0, oc, 512);
    _tile_loadd(1, oc + 64, 512);
    _tile_loadd(2, oc + 128, 512);
    _tile_loadd(3, oc + 192, 512);
    for (int g = 0; g < 4; ++g) {
      if (c == 0) near(4 + g);
      const uint8_t* v = t.v[g];
      _tile_loadd(4, AP + g * 2048, 64);
      _tile_loadd(5, AP + g * 2048 + 1024, 64);
      _tile_loadd(6, v + c * 2, 256);
      _tile_dpbf16ps(0, 4, 6);
      step();
      _tile_dpbf16ps(1, 5, 6);
      step();
      _tile_loadd(7, v + c * 2 + 64, 256);
      _tile_dpbf16ps(2, 4, 7);
      step();
      _tile_dpbf16ps(3, 5, 7);
      step();
    }
    _tile_stored(0, oc, 512);
    _tile_stored(1, oc + 64, 512);
    _tile_stored(2, oc + 128, 512);
    _tile_stored(3, oc + 192, 512);
  }
}
static double run(const std::vector<Tile>& tiles, Pf pf, size_t it) {
  auto t0 = std::chrono::steady_clock::now();
  for (size_t n = 0; n < it; ++n) {
    const size_t i = n % tiles.size(), j = (n + 1) % tiles.size();
    tile(tiles[i], tiles[j], pf);
    asm volatile("" ::: "memory");
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(it);
}
// A plain read of the same groups (AVX-512 loads, the next group's lines prefetched t0 ahead).
static double read(const std::vector<Tile>& tiles, size_t it) {
  __m512i acc = _mm512_setzero_si512();
  auto t0 = std::chrono::steady_clock::now();
  for (size_t n = 0; n < it; ++n) {
    const Tile& t = tiles[n % tiles.size()];
    for (int g = 0; g < 8; ++g) {
      const uint8_t* p = group_of(t, g);
      for (int o = 0; o < 4096; o += 64)
        acc = _mm512_xor_si512(acc, _mm512_load_si512(reinterpret_cast<const void*>(p + o)));
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  volatile int sink = _mm512_reduce_add_epi32(acc);
  (void)sink;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(it);
}
int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);
  for (int i = 0; i < 8; ++i) {
    c16.colsb[i] = 64;
    c16.rows[i] = 16;
  }
  _tile_loadconfig(&c16);
  const size_t groups = 65536;  // 256 MB
  auto* pool = static_cast<uint8_t*>(std::aligned_alloc(4096, groups * kGroup));
  for (size_t i = 0; i < groups * kGroup; ++i) pool[i] = uint8_t((i * 2654435761u) >> 24) & 0x3f;
  for (int i = 0; i < int(sizeof QT); ++i) QT[i] = uint8_t(i * 7) & 0x3f;
  for (int i = 0; i < int(sizeof AP); ++i) AP[i] = uint8_t(i * 5) & 0x3f;
  std::vector<size_t> perm(groups);
  for (size_t i = 0; i < groups; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(58));
  std::vector<Tile> big(groups / 8), seq(groups / 8);
  for (size_t i = 0; i < groups / 8; ++i)
    for (int g = 0; g < 4; ++g) {
      big[i].k[g] = pool + perm[8 * i + g] * kGroup;
      big[i].v[g] = pool + perm[8 * i + 4 + g] * kGroup;
      seq[i].k[g] = pool + (8 * i + g) * kGroup;
      seq[i].v[g] = pool + (8 * i + 4 + g) * kGroup;
    }
  const std::vector<Tile> l2(big.begin(), big.begin() + 24);
  for (int rep = 0; rep < 2; ++rep) {
    for (const std::vector<Tile>* set :
         {&l2, (const std::vector<Tile>*)&big, (const std::vector<Tile>*)&seq}) {
      const char* nm = set == &l2    ? "L2 (24 tiles)"
                       : set == &big ? "DRAM shuffled"
                                     : "DRAM in order";
      const size_t it = set == &l2 ? 100000 : set->size();
      read(*set, it / 8);
      const double r = read(*set, it);
      printf("%-14s plain read         : %6.0f ns a tile, %5.1f GB/s\n", nm, r, 32768 / r);
      for (int pf = 0; pf < kCount; ++pf) {
        run(*set, Pf(pf), it / 8);
        const double ns = run(*set, Pf(pf), it);
        printf("%-14s %-19s: %6.0f ns a tile, %5.1f GB/s\n", nm, kNames[pf], ns, 32768 / ns);
      }
    }
  }
}
