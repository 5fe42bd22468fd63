// Throwaway microbenchmark (not part of the build; session 31, bench/NOTES.md): each of THREADS
// threads (argv 1) reads its own 512 MiB in shuffled RUN-byte runs (argv 2), N runs at a time, 20
// FMAs a 64-byte line, and prefetches (prefetcht0) the group of N runs DIST groups ahead. Mode 1:
// loads and prefetches take one line of each run in turn; mode 5: both run by run (CPU_FLASH's
// order before session 31); mode 6: loads run by run, prefetches one line of each run in turn
// (its order since). The output's second half came from this file with
// cpu_2026-12-02_s31_prefetch_order_micro_hint.diff applied (prefetcht1; modes 7 and 8 prefetch
// every second / fourth line only). Modes 2-4 are earlier variants of the loop, not run for it.
#include <immintrin.h>
#include <sys/mman.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
struct B {
  char* buf;
  std::vector<long> runs;
};
B make(long bytes, long run, int seed) {
  B b;
  b.buf = (char*)aligned_alloc(1 << 21, bytes);
  madvise(b.buf, bytes, MADV_HUGEPAGE);
  memset(b.buf, 1, bytes);
  b.runs.resize(bytes / run);
  for (long i = 0; i < (long)b.runs.size(); ++i) b.runs[i] = i;
  std::shuffle(b.runs.begin(), b.runs.end(), std::mt19937(seed));
  return b;
}
template <int WORK>
__attribute__((noinline)) float go(const B& b, long run, int N, int mode, int dist) {
  __m512 acc[8];
  for (auto& a : acc) a = _mm512_setzero_ps();
  const __m512 m = _mm512_set1_ps(1.0001f);
  const long nr = b.runs.size();
  const long lines = run / 64;
  for (long r0 = 0; r0 + N <= nr; r0 += N) {
    const char* p[16];
    for (int k = 0; k < N; ++k) p[k] = b.buf + b.runs[r0 + k] * run;
    const char* q[16];
    const bool pf = mode > 0 && r0 + dist * N + N <= nr;
    if (pf)
      for (int k = 0; k < N; ++k) q[k] = b.buf + b.runs[r0 + dist * N + k] * run;
    if (pf && mode == 3)
      for (int k = 0; k < N; ++k) {
        _mm_prefetch(q[k], _MM_HINT_T0);
        _mm_prefetch(q[k] + 64, _MM_HINT_T0);
      }
    for (long l = 0; l < lines; ++l)
      for (int k = 0; k < N; ++k) {
        if (pf && (mode == 1 || mode == 6)) _mm_prefetch(q[k] + l * 64, _MM_HINT_T0);
        if (pf && (mode == 4 || mode == 5)) {
          const long i = l * N + k;
          _mm_prefetch(q[i / lines] + (i % lines) * 64, _MM_HINT_T0);
        }
        if (mode == 5 || mode == 6) {
          const long i = l * N + k;
          __m512 x = _mm512_castsi512_ps(_mm512_load_si512(p[i / lines] + (i % lines) * 64));
          acc[7] = _mm512_add_ps(acc[7], x);
#pragma GCC unroll 64
          for (int w = 0; w < WORK; ++w) acc[w % 7] = _mm512_fmadd_ps(acc[w % 7], m, x);
          continue;
        }
        if (pf && mode == 2) _mm_prefetch(q[k] + l * 64, _MM_HINT_T1);
        __m512 x = _mm512_castsi512_ps(_mm512_load_si512(p[k] + l * 64));
        acc[7] = _mm512_add_ps(acc[7], x);
#pragma GCC unroll 64
        for (int w = 0; w < WORK; ++w) acc[w % 7] = _mm512_fmadd_ps(acc[w % 7], m, x);
      }
  }
  __m512 s = acc[0];
  for (int j = 1; j < 8; ++j) s = _mm512_add_ps(s, acc[j]);
  return _mm512_reduce_add_ps(s);
}
int main(int argc, char** argv) {
  int T = atoi(argv[1]);
  long run = atol(argv[2]);
  long bytes = 1L << 29;
  std::vector<B> bs;
  for (int t = 0; t < T; ++t) bs.push_back(make(bytes, run, t + 1));
  volatile float sink = 0;
  for (int round = 0; round < 2; ++round)
    for (int work : {20})
      for (int mode : {1, 5, 6})
        for (int N : {2, 4, 8}) {
          const int dist = mode == 0 ? 0 : std::max(1, int(16384 / (run * N)));
          double best = 1e9;
          for (int rep = 0; rep < 3; ++rep) {
            double t0 = now();
            std::vector<std::thread> ts;
            for (int t = 0; t < T; ++t)
              ts.emplace_back([&, t] { sink = sink + go<20>(bs[t], run, N, mode, dist); });
            for (auto& x : ts) x.join();
            best = std::min(best, now() - t0);
          }
          printf("T %d run %5ld work %2d mode %d N %d dist %d %6.2f GB/s\n", T, run, work, mode, N,
                 dist, T * bytes / best * 1e-9);
          fflush(stdout);
        }
}
