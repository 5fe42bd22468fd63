// Throwaway microbenchmark (not part of the build; session 40, bench/NOTES.md): session 23's
// cpu_2026-12-01_s23_prefetch_runs_micro.cpp with the prefetch instruction as a template
// parameter (HINT 0 prefetcht0, 1 prefetcht1, 2 prefetcht2, 3 prefetchnta, 4 prefetchw, 5 a plain
// load of the line), one distance (256 lines, every line). `pf_hint THREADS RUN`.
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
template <int WORK, int HINT>
__attribute__((noinline)) float runit(const char* const* lines, long n, long dist, long stride) {
  __m512 acc[8];
  for (auto& a : acc) a = _mm512_setzero_ps();
  __m512 m = _mm512_set1_ps(1.0001f);
  for (long i = 0; i < n; ++i) {
    if (stride > 0 && (i % stride) == 0 && i + dist < n) {
      if (HINT == 0)
        _mm_prefetch(lines[i + dist], _MM_HINT_T0);
      else if (HINT == 1)
        _mm_prefetch(lines[i + dist], _MM_HINT_T1);
      else if (HINT == 2)
        _mm_prefetch(lines[i + dist], _MM_HINT_T2);
      else if (HINT == 3)
        _mm_prefetch(lines[i + dist], _MM_HINT_NTA);
      else if (HINT == 4)
        _m_prefetchw((void*)lines[i + dist]);
      else {
        asm volatile("" ::"r"(*(volatile const char*)lines[i + dist]));
      }
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
struct Buf {
  std::vector<const char*> lines;
};
Buf make(long bytes, long run, int seed) {
  char* buf = (char*)aligned_alloc(1 << 21, bytes);
  madvise(buf, bytes, MADV_HUGEPAGE);
  memset(buf, 1, bytes);
  std::vector<long> runs(bytes / run);
  for (long i = 0; i < (long)runs.size(); ++i) runs[i] = i;
  std::shuffle(runs.begin(), runs.end(), std::mt19937(seed));
  Buf b;
  b.lines.reserve(bytes / 64);
  for (long r : runs)
    for (long o = 0; o < run; o += 64) b.lines.push_back(buf + r * run + o);
  return b;
}
int main(int argc, char** argv) {
  const long bytes = 1L << 29, run = atol(argv[2]);
  const int threads = atoi(argv[1]);
  std::vector<Buf> bufs;
  for (int t = 0; t < threads; ++t) bufs.push_back(make(bytes, run, t + 1));
  const long configs[][2] = {{256, 1}};
  volatile float sink = 0;
  auto time_all = [&](int work, auto fn) {
    for (const auto& c : configs) {
      double best = 1e9;
      for (int rep = 0; rep < 3; ++rep) {
        const double t0 = now();
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
          ts.emplace_back([&, t] {
            sink = sink + fn(bufs[t].lines.data(), (long)bufs[t].lines.size(), c[0], c[1]);
          });
        for (auto& x : ts) x.join();
        best = std::min(best, now() - t0);
      }
      printf("run %ld threads %d work %2d dist %4ld stride %ld  %6.2f GB/s\n", run, threads, work,
             c[0], c[1], threads * bytes / best * 1e-9);
    }
  };
  for (int r = 0; r < 2; ++r) {
    printf("t0\n");
    time_all(0, runit<0, 0>);
    time_all(16, runit<16, 0>);
    printf("t1\n");
    time_all(0, runit<0, 1>);
    time_all(16, runit<16, 1>);
    printf("t2\n");
    time_all(0, runit<0, 2>);
    time_all(16, runit<16, 2>);
    printf("nta\n");
    time_all(0, runit<0, 3>);
    time_all(16, runit<16, 3>);
    printf("w\n");
    time_all(0, runit<0, 4>);
    time_all(16, runit<16, 4>);
    printf("load\n");
    time_all(0, runit<0, 5>);
    time_all(16, runit<16, 5>);
  }
}
