// s42 toy loops (not attnkit code): one core's zmm FMA issue rate (12 independent chains), its
// vdpbf16ps issue rate with several operand sets (12 chains), and the latency of a dependent
// FMA chain (gives the clock: 4 cycles a link on Intel cores). g++ -O2 -march=native.
#include <immintrin.h>

#include <chrono>
#include <cstdio>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
#define R12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
constexpr long N = 50000000;
__attribute__((noinline)) void fma_rate() {
#define DECL(i) __m512 a##i = _mm512_set1_ps(1.f + i * 1e-3f);
  R12(DECL)
  const __m512 b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(1e-4f);
  const double t = now();
  for (long n = 0; n < N; ++n) {
#define F(i) a##i = _mm512_fmadd_ps(a##i, b, c);
    R12(F)
  }
  const double dt = now() - t;
#define S(i) +_mm512_reduce_add_ps(a##i)
  const float s = 0 R12(S);
  std::printf("vfmadd231ps zmm, 12 chains: %.2f G/s (%g)\n", N * 12 / dt / 1e9, s);
}
__attribute__((noinline)) void dot_rate(__m512i kb, __m512i kc, const char* name) {
#define DECLD(i) __m512 a##i = _mm512_set1_ps(float(i));
  R12(DECLD)
  const double t = now();
  for (long n = 0; n < N; ++n) {
#define D(i) a##i = _mm512_dpbf16_ps(a##i, (__m512bh)kb, (__m512bh)kc);
    R12(D)
  }
  const double dt = now() - t;
  const float s = 0 R12(S);
  std::printf("vdpbf16ps zmm, 12 chains, %-34s %.2f G/s (%g)\n", name, N * 12 / dt / 1e9, s);
}
__attribute__((noinline)) void fma_latency() {
  __m512 a = _mm512_set1_ps(1.f);
  const __m512 b = _mm512_set1_ps(0.9999f), c = _mm512_set1_ps(1e-4f);
  const double t = now();
  for (long n = 0; n < N * 4; ++n) {
    a = _mm512_fmadd_ps(a, b, c);
    asm volatile("" : "+v"(a));
  }
  const double dt = now() - t;
  std::printf("dependent FMA chain: %.3f ns a link (%g)\n", dt / (N * 4) * 1e9,
              _mm512_reduce_add_ps(a));
}
int main() {
  for (int round = 0; round < 2; ++round) {
    fma_rate();
    dot_rate(_mm512_castps_si512(_mm512_set1_ps(1.0000001f)),
             _mm512_castps_si512(_mm512_set1_ps(1e-7f)), "the backend probe's operands");
    dot_rate(_mm512_set1_epi16(0x3f80), _mm512_set1_epi16(0x3f80), "1.0 x 1.0");
    dot_rate(_mm512_set1_epi32(0x3f800001), _mm512_set1_epi32(0x3f803f80), "a denormal word x 1.0");
    dot_rate(_mm512_set1_epi32(0x3c003c00), _mm512_set1_epi32(0xbc00bc00), "0.0078 x -0.0078");
    fma_latency();
  }
}
