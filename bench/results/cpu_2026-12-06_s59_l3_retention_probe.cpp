// Session 59: does this machine's L3 keep part of a working set several times its size, read over
// and over? `threads` threads read the first W bytes of one buffer (each its contiguous part,
// 64-byte loads), W from 4x to 32x the L3, the sizes in turn round by round; per size the median
// GB/s of two back-to-back passes' second pass. Build: g++ -O2 -mavx512f -pthread.
#include <immintrin.h>
#include <sys/mman.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
static uint64_t sum(const uint8_t* p, int64_t bytes) {
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  for (int64_t o = 0; o + 128 <= bytes; o += 128) {
    a = _mm512_add_epi64(a, _mm512_load_si512(p + o));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + o + 64));
  }
  return _mm512_reduce_add_epi64(_mm512_add_epi64(a, b));
}
int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 2;
  const int64_t l3 = (argc > 2 ? atoll(argv[2]) : 300) << 20;
  const int rounds = argc > 3 ? atoi(argv[3]) : 5;
  const int mult[] = {4, 8, 16, 32};
  const int64_t total = l3 * 32;
  auto* buf = static_cast<uint8_t*>(aligned_alloc(1 << 21, total));
  madvise(buf, total, MADV_HUGEPAGE);
  for (int64_t i = 0; i < total / 8; ++i) reinterpret_cast<uint64_t*>(buf)[i] = i;
  std::vector<std::vector<double>> g(4);
  volatile uint64_t sink = 0;
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < 4; ++k) {
      const int64_t w = l3 * mult[(k + r) % 4];
      for (int pass = 0; pass < 2; ++pass) {
        std::vector<std::thread> ts;
        std::vector<uint64_t> s(threads);
        const double t0 = now();
        for (int th = 0; th < threads; ++th)
          ts.emplace_back([&, th] {
            const int64_t lines = w / 64, lo = lines * th / threads,
                          hi = lines * (th + 1) / threads;
            s[th] = sum(buf + lo * 64, (hi - lo) * 64);
          });
        for (auto& t : ts) t.join();
        if (pass) g[(k + r) % 4].push_back(w / (now() - t0) * 1e-9);
        for (auto x : s) sink = sink + x;
      }
    }
  for (int k = 0; k < 4; ++k) {
    std::sort(g[k].begin(), g[k].end());
    printf("%d threads W = %2d x L3: median %.1f GB/s (min %.1f, max %.1f)\n", threads, mult[k],
           g[k][g[k].size() / 2], g[k].front(), g[k].back());
  }
}
