// Session 56 (not kept): TDPBF16PS issue cost on this VM with 16, 8 and 4 rows configured for the
// A and C tiles, four independent accumulators and one chain. Build: g++ -O2 -mamx-tile
// -mamx-bf16 -mavx512f; output in cpu_2026-12-06_s56_amx_rows_toy.txt.
// TDPBF16PS issue cost by the rows M of A and C: four independent accumulators.
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
alignas(64) static uint8_t buf[8][1024];
template <int M>
double run(long iters) {
  alignas(64) Cfg c;
  for (int i = 0; i < 8; ++i) {
    c.colsb[i] = 64;
    c.rows[i] = 16;
  }
  for (int i : {0, 1, 2, 3, 4, 5}) c.rows[i] = M;  // C tiles and A tiles
  asm volatile("" ::"m"(c) : "memory");
  _tile_loadconfig(&c);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, buf[4], 64);
  _tile_loadd(5, buf[5], 64);
  _tile_loadd(6, buf[6], 64);
  _tile_loadd(7, buf[7], 64);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 5, 6);
    _tile_dpbf16ps(2, 4, 7);
    _tile_dpbf16ps(3, 5, 7);
  }
  auto t1 = std::chrono::steady_clock::now();
  _tile_stored(0, buf[0], 64);
  _tile_release();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (iters * 4.0);
}
template <int M>
double chain(long iters) {
  alignas(64) Cfg c;
  for (int i = 0; i < 8; ++i) {
    c.colsb[i] = 64;
    c.rows[i] = 16;
  }
  for (int i : {0, 1, 2, 3, 4, 5}) c.rows[i] = M;
  asm volatile("" ::"m"(c) : "memory");
  _tile_loadconfig(&c);
  _tile_zero(0);
  _tile_loadd(4, buf[4], 64);
  _tile_loadd(6, buf[6], 64);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 6);
  }
  auto t1 = std::chrono::steady_clock::now();
  _tile_stored(0, buf[0], 64);
  _tile_release();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(iters);
}
int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);  // ARCH_REQ_XCOMP_PERM XFEATURE_XTILEDATA
  memset(buf, 0, sizeof buf);
  for (int rep = 0; rep < 3; ++rep)
    printf(
        "4 chains, ns a product: M=16 %.2f  M=8 %.2f  M=4 %.2f | one chain: M=16 %.2f M=8 %.2f\n",
        run<16>(2000000), run<8>(2000000), run<4>(2000000), chain<16>(1000000), chain<8>(1000000));
}
