#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
int main() {
  for (size_t bytes : {size_t(16) << 10, size_t(256) << 10, size_t(1) << 20, size_t(1536) << 10,
                       size_t(8) << 20, size_t(64) << 20}) {
    float* p = (float*)aligned_alloc(64, bytes);
    memset(p, 1, bytes);
    size_t n = bytes / 4;
    size_t reps = (size_t(4) << 30) / bytes;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    double best = 1e9;
    for (int trial = 0; trial < 5; ++trial) {
      auto t0 = std::chrono::steady_clock::now();
      for (size_t r = 0; r < reps / 5; ++r)
        for (size_t i = 0; i < n; i += 64) {
          a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
          a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
          a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32));
          a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
        }
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s < best) best = s;
    }
    float out[16];
    _mm512_storeu_ps(out, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    printf("%8zu KiB: %.1f GB/s (%g)\n", bytes >> 10, double(bytes) * (reps / 5) / best * 1e-9,
           out[0]);
    free(p);
  }
  // FMA latency chain: clock estimate
  __m512 x = _mm512_set1_ps(1.0f), m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < 200000000; ++i) x = _mm512_fmadd_ps(x, m, c);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  float o[16];
  _mm512_storeu_ps(o, x);
  printf("fma chain: %.3f ns/link (%g) -> %.2f GHz at 4 cycles\n", s / 2e8 * 1e9, o[0],
         4 / (s / 2e8 * 1e9));
}
