// Session 58: read-ceiling variants on this machine. `threads` threads each sum one contiguous
// part of a buffer with 64-byte loads: plain (the bench's read_bw), with prefetcht0 / prefetcht1
// `dist` bytes ahead, and with the part read as 4 or 8 interleaved streams (64 bytes of each in
// turn). Build: g++ -O2 -mavx512f -pthread.
#include <immintrin.h>
#include <sys/mman.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
template <int kHint, int kDist>
uint64_t sum_pf(const uint8_t* p, int64_t bytes) {
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  for (int64_t o = 0; o + 128 <= bytes; o += 128) {
    if (kDist) {
      _mm_prefetch(reinterpret_cast<const char*>(p + o + kDist), _mm_hint(kHint));
      _mm_prefetch(reinterpret_cast<const char*>(p + o + kDist + 64), _mm_hint(kHint));
    }
    a = _mm512_add_epi64(a, _mm512_load_si512(p + o));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + o + 64));
  }
  return _mm512_reduce_add_epi64(_mm512_add_epi64(a, b));
}
template <int kStreams>
uint64_t sum_streams(const uint8_t* p, int64_t bytes) {
  const int64_t part = bytes / kStreams / 64 * 64;
  __m512i acc[kStreams];
  for (int s = 0; s < kStreams; ++s) acc[s] = _mm512_setzero_si512();
  for (int64_t o = 0; o < part; o += 64)
    for (int s = 0; s < kStreams; ++s)
      acc[s] = _mm512_add_epi64(acc[s], _mm512_load_si512(p + s * part + o));
  __m512i t = acc[0];
  for (int s = 1; s < kStreams; ++s) t = _mm512_add_epi64(t, acc[s]);
  return _mm512_reduce_add_epi64(t);
}
using Fn = uint64_t (*)(const uint8_t*, int64_t);
int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 2;
  const int64_t bytes = (argc > 2 ? atoll(argv[2]) : 1280) << 20;
  auto* buf = static_cast<uint8_t*>(aligned_alloc(1 << 21, bytes));
  madvise(buf, bytes, MADV_HUGEPAGE);
  for (int64_t i = 0; i < bytes / 8; ++i) reinterpret_cast<uint64_t*>(buf)[i] = i;
  struct V {
    const char* name;
    Fn f;
  } vs[] = {{"plain", sum_pf<0, 0>},       {"t0 +512", sum_pf<3, 512>},
            {"t0 +1024", sum_pf<3, 1024>}, {"t0 +2048", sum_pf<3, 2048>},
            {"t1 +2048", sum_pf<2, 2048>}, {"t1 +4096", sum_pf<2, 4096>},
            {"4 streams", sum_streams<4>}, {"8 streams", sum_streams<8>}};
  volatile uint64_t sink = 0;
  for (int rep = 0; rep < 3; ++rep)
    for (const V& v : vs) {
      std::vector<double> t;
      for (int pass = 0; pass < 4; ++pass) {
        std::vector<std::thread> ts;
        std::vector<uint64_t> sums(threads);
        const double t0 = now();
        for (int th = 0; th < threads; ++th)
          ts.emplace_back([&, th] {
            const int64_t lines = bytes / 64, lo = lines * th / threads,
                          hi = lines * (th + 1) / threads;
            sums[th] = v.f(buf + lo * 64, (hi - lo) * 64);
          });
        for (auto& x : ts) x.join();
        if (pass) t.push_back(now() - t0);
        for (auto s : sums) sink = sink + s;
      }
      std::sort(t.begin(), t.end());
      printf("%d threads %-10s %6.1f GB/s (best %6.1f)\n", threads, v.name, bytes / t[1] * 1e-9,
             bytes / t[0] * 1e-9);
    }
}
