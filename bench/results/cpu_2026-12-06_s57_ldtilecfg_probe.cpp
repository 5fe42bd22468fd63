// Session 57 (not kept): what two ldtilecfg a 64-key tile would cost (16-row tiles for scores,
// 8-row A/C tiles for P.V): one chain of 16 products at 16 rows and 32 at 8 rows per iteration,
// without and with the two configurations. Build: g++ -O2 -mamx-tile -mamx-bf16 -mavx512f; output
// in cpu_2026-12-06_s57_ldtilecfg_probe.txt.
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
alignas(64) static Cfg c16, c8;
// ns per iteration: k products (one chain) + optional two ldtilecfg (16-row then 8-row)
template <bool Cfgs>
double run(long iters) {
  _tile_loadconfig(&c16);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) {
    if (Cfgs) _tile_loadconfig(&c16);
    _tile_loadd(4, buf[4], 64);
    _tile_loadd(6, buf[6], 64);
    _tile_zero(0);
    for (int k = 0; k < 16; ++k) _tile_dpbf16ps(0, 4, 6);
    _tile_stored(0, buf[0], 64);
    if (Cfgs) _tile_loadconfig(&c8);
    _tile_loadd(4, buf[4], 64);
    _tile_loadd(6, buf[6], 64);
    _tile_zero(0);
    for (int k = 0; k < 32; ++k) _tile_dpbf16ps(0, 4, 6);
    _tile_stored(0, buf[0], 64);
  }
  auto t1 = std::chrono::steady_clock::now();
  _tile_release();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(iters);
}
int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);
  memset(buf, 0, sizeof buf);
  for (int i = 0; i < 8; ++i) {
    c16.colsb[i] = c8.colsb[i] = 64;
    c16.rows[i] = c8.rows[i] = 16;
  }
  for (int i : {0, 4}) c8.rows[i] = 8;
  for (int rep = 0; rep < 5; ++rep)
    printf("no cfg %.1f ns  two cfgs %.1f ns per iteration (16 + 32 products)\n",
           run<false>(200000), run<true>(200000));
}
