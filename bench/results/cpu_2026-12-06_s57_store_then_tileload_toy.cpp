// Session 57 (not kept): whether vector stores of A-tile rows stall the tile loads that read them
// right after (the profile in cpu_2026-12-06_s57_fp8_gqa4_profile.txt puts samples just after
// TDPBF16PS). Build: g++ -O2 -mamx-tile -mamx-bf16 -mavx512f; output in
// cpu_2026-12-06_s57_store_then_tileload_toy.txt.
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
struct Cfg {
  uint8_t palette = 1, start = 0, res[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
alignas(64) static uint8_t A[8][1024], B[1024], C[1024], X[8][1024];
alignas(64) static Cfg cfg;
// per iteration: 8 A tiles' rows written with vector stores (to A or to X), then 8 products
// reading A tiles (every product's A a fresh load).
template <bool Same, int Gap>
double run(long it) {
  _tile_loadconfig(&cfg);
  _tile_loadd(6, B, 64);
  _tile_zero(0);
  __m512i v = _mm512_set1_epi32(0x3f80);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < it; ++i) {
    uint8_t(*dst)[1024] = Same ? A : X;
    for (int t = 0; t < 8; ++t)
      for (int r = 0; r < 16; ++r) _mm512_store_si512(dst[t] + 64 * r, v);
    for (int k = 0; k < Gap; ++k) v = _mm512_add_epi32(v, _mm512_set1_epi32(1));
    for (int t = 0; t < 8; ++t) {
      _tile_loadd(4, A[t], 64);
      _tile_dpbf16ps(0, 4, 6);
    }
    asm volatile("" ::: "memory");
  }
  auto t1 = std::chrono::steady_clock::now();
  _tile_stored(0, C, 64);
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(it);
}
int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);
  for (int i = 0; i < 8; ++i) {
    cfg.colsb[i] = 64;
    cfg.rows[i] = 16;
  }
  memset(A, 0, sizeof A);
  for (int rep = 0; rep < 5; ++rep)
    printf(
        "128 stores then 8 loads+products: stores to the loaded tiles %.0f ns, to other memory "
        "%.0f ns\n",
        run<true, 0>(200000), run<false, 0>(200000));
}
