// Session 57 (not kept): the AMX path's two products for an item of 8 query rows, head 128, one
// 64-key tile, data in L1. "cur": the kernel's register use (direct_scores: C 0-1, Q^T 2-3, K 4-7;
// direct_pv: O 0-3, P 4-5, V 6-7), every tile 16 rows. "red"/"mix": scores on C 4-5, Q^T 6, K 7
// (16 rows) and P.V on O 0-1 (32 dims a pass), P 2-3 with 8 rows configured, V 7, so that one
// tile configuration serves both products with 8-row A and C tiles for P.V (two ldtilecfg a
// tile instead: cpu_2026-12-06_s57_ldtilecfg_probe.cpp). Build: g++ -O2 -mamx-tile -mamx-bf16
// -mavx512f.
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
struct Cfg {
  uint8_t palette = 1, start = 0, res[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
alignas(64) static uint8_t K[64 * 256], QT[64 * 64], S[2 * 1024], AP[8 * 1024], V[64 * 256],
    O[16 * 512];
alignas(64) static Cfg c16, cmix;
// current scores: regs 0,1 C; 2,3 qt; 4,5,6,7 K
static void scores_cur() {
  for (int kg = 0; kg < 64; kg += 32) {
    const uint8_t* k0 = K + kg * 256;
    const uint8_t* k1 = k0 + 16 * 256;
    _tile_zero(0);
    _tile_zero(1);
    for (int p = 0; p < 64; p += 32) {
      _tile_loadd(2, QT + p * 64, 64);
      _tile_loadd(4, k0 + p * 4, 256);
      _tile_dpbf16ps(0, 4, 2);
      _tile_loadd(6, k1 + p * 4, 256);
      _tile_dpbf16ps(1, 6, 2);
      _tile_loadd(3, QT + (p + 16) * 64, 64);
      _tile_loadd(5, k0 + (p + 16) * 4, 256);
      _tile_dpbf16ps(0, 5, 3);
      _tile_loadd(7, k1 + (p + 16) * 4, 256);
      _tile_dpbf16ps(1, 7, 3);
    }
    _tile_stored(0, S, 64);
    _tile_stored(1, S + 1024, 64);
  }
}
// reduced scores: C 4,5; qt 6; K 7
static void scores_red() {
  for (int kg = 0; kg < 64; kg += 32) {
    const uint8_t* k0 = K + kg * 256;
    const uint8_t* k1 = k0 + 16 * 256;
    _tile_zero(4);
    _tile_zero(5);
    for (int p = 0; p < 64; p += 16) {
      _tile_loadd(6, QT + p * 64, 64);
      _tile_loadd(7, k0 + p * 4, 256);
      _tile_dpbf16ps(4, 7, 6);
      _tile_loadd(7, k1 + p * 4, 256);
      _tile_dpbf16ps(5, 7, 6);
    }
    _tile_stored(4, S, 64);
    _tile_stored(5, S + 1024, 64);
  }
}
// current P.V: C 0-3 (64 dims), A 4,5, B 6,7; 4 groups of 16 keys
static void pv_cur() {
  for (int c = 0; c < 128; c += 64) {
    uint8_t* oc = O + c * 4;
    _tile_loadd(0, oc, 512);
    _tile_loadd(1, oc + 64, 512);
    _tile_loadd(2, oc + 128, 512);
    _tile_loadd(3, oc + 192, 512);
    for (int g = 0; g < 4; ++g) {
      _tile_loadd(4, AP + g * 2048, 64);
      _tile_loadd(5, AP + g * 2048 + 1024, 64);
      _tile_loadd(6, V + g * 16 * 256 + c * 2, 256);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 5, 6);
      _tile_loadd(7, V + g * 16 * 256 + c * 2 + 64, 256);
      _tile_dpbf16ps(2, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, oc, 512);
    _tile_stored(1, oc + 64, 512);
    _tile_stored(2, oc + 128, 512);
    _tile_stored(3, oc + 192, 512);
  }
}
// mixed P.V: C 0,1 (32 dims, 8 rows), A 2,3 (8 rows), B 7 (16 rows)
static void pv_mix() {
  for (int c = 0; c < 128; c += 32) {
    uint8_t* oc = O + c * 4;
    _tile_loadd(0, oc, 512);
    _tile_loadd(1, oc + 64, 512);
    for (int g = 0; g < 4; ++g) {
      _tile_loadd(2, AP + g * 2048, 64);
      _tile_loadd(3, AP + g * 2048 + 1024, 64);
      _tile_loadd(7, V + g * 16 * 256 + c * 2, 256);
      _tile_dpbf16ps(0, 2, 7);
      _tile_dpbf16ps(1, 3, 7);
    }
    _tile_stored(0, oc, 512);
    _tile_stored(1, oc + 64, 512);
  }
}
template <class F>
double time(F f, const Cfg& c, long it) {
  _tile_loadconfig(&c);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < it; ++i) {
    f();
    asm volatile("" ::: "memory");
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(it);
}
int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);
  for (int i = 0; i < 8; ++i) {
    c16.colsb[i] = cmix.colsb[i] = 64;
    c16.rows[i] = cmix.rows[i] = 16;
  }
  for (int i : {0, 1, 2, 3}) cmix.rows[i] = 8;
  for (int rep = 0; rep < 5; ++rep) {
    long it = 200000;
    double a = time(scores_cur, c16, it), b = time(scores_red, c16, it),
           b2 = time(scores_red, cmix, it);
    double c = time(pv_cur, c16, it), d = time(pv_mix, cmix, it);
    double e = time(
               [] {
                 scores_cur();
                 pv_cur();
               },
               c16, it),
           f = time(
               [] {
                 scores_red();
                 pv_mix();
               },
               cmix, it);
    printf(
        "scores cur %.0f red %.0f red(mix cfg) %.0f | pv cur %.0f mix %.0f | both cur %.0f mix "
        "%.0f ns\n",
        a, b, b2, c, d, e, f);
  }
}
