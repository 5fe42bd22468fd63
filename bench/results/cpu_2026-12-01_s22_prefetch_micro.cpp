// Throwaway microbenchmark (not part of the build): one core reads 1 GiB in 4 KiB runs (shuffled)
// with WORK dependent-chain FMAs per 64-byte line, prefetching (prefetcht1) `dist` lines ahead,
// `burst` lines at a time every `burst` lines. Session 22, bench/NOTES.md.
#include <immintrin.h>
#include <sys/mman.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
template <int WORK, int HINT>
__attribute__((noinline)) float runit(const char* const* lines, long n, long dist, long burst) {
  __m512 acc[8];
  for (auto& a : acc) a = _mm512_setzero_ps();
  __m512 m = _mm512_set1_ps(1.0001f);
  for (long i = 0; i < n; ++i) {
    if (dist > 0 && i % burst == 0) {
      for (long j = i + dist; j < std::min(n, i + dist + burst); ++j)
        _mm_prefetch(lines[j], _MM_HINT_T1);
    } else if (dist < 0 && i + -dist < n) {
      if (HINT == 1)
        _mm_prefetch(lines[i - dist], _MM_HINT_T1);
      else if (HINT == 2)
        _mm_prefetch(lines[i + dist], _MM_HINT_T2);
      else if (HINT == 0)
        _mm_prefetch(lines[i + dist], _MM_HINT_T0);
    }
    __m512 x = _mm512_castsi512_ps(_mm512_load_si512(lines[i]));
    acc[7] = _mm512_add_ps(acc[7], x);
#pragma GCC unroll 64
    for (int w = 0; w < WORK; ++w) acc[w % 7] = _mm512_fmadd_ps(acc[w % 7], m, m);
  }
  __m512 s = acc[0];
  for (int j = 1; j < 8; ++j) s = _mm512_add_ps(s, acc[j]);
  return _mm512_reduce_add_ps(s);
}
int main(int argc, char** argv) {
  const long bytes = 1L << 30, run = atol(argv[1]);
  char* buf = (char*)aligned_alloc(1 << 21, bytes);
  madvise(buf, bytes, MADV_HUGEPAGE);
  memset(buf, 1, bytes);
  std::vector<long> runs(bytes / run);
  for (long i = 0; i < (long)runs.size(); ++i) runs[i] = i;
  if (argc > 2 && atoi(argv[2])) std::shuffle(runs.begin(), runs.end(), std::mt19937(1));
  std::vector<const char*> lines;
  lines.reserve(bytes / 64);
  for (long r : runs)
    for (long o = 0; o < run; o += 64) lines.push_back(buf + r * run + o);
  float sink = 0;
  const long n = lines.size();
  // Every WORK runs the same configurations: (dist, burst); dist 0: no prefetch.
  const long configs[][2] = {{0, 1},    {128, 1},  {128, 4},  {128, 16},
                             {128, 64}, {1024, 1}, {1024, 64}};
  auto time_all = [&](auto work, auto fn) {
    for (const auto& c : configs) {
      double best = 1e9;
      for (int rep = 0; rep < 3; ++rep) {
        const double t0 = now();
        sink += fn(lines.data(), n, c[0], c[1]);
        best = std::min(best, now() - t0);
      }
      printf("work %2d burst %3ld dist %4ld  %6.2f GB/s  %5.2f ns/line\n", int(work), c[1], c[0],
             bytes / best * 1e-9, best / n * 1e9);
    }
  };
  time_all(0, runit<0, 1>);
  time_all(24, runit<24, 1>);
  time_all(32, runit<32, 1>);
  printf("%f\n", sink);
}
