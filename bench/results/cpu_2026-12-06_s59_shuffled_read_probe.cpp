// Session 59: is a sequential read the ceiling of this machine's reads? Each of `threads` threads
// sums its half of a buffer with 64-byte loads: sequentially (plain, and with prefetcht0 1 KiB
// ahead: two of the bench's read_bw ways), and as runs of `run` bytes in a shuffled order (the
// paged decode's pattern: one (block, KV head) run of K is 4 KiB at page 16, head 128, bf16),
// with no prefetch, or with every line of the run `ahead` runs on prefetched (t0 or t1) while
// the current run is read, line for line. Build: g++ -O2 -mavx512f -pthread.
#include <immintrin.h>
#include <sys/mman.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <thread>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
template <int kDist>
uint64_t seq(const uint8_t* p, int64_t bytes, const int64_t*, int64_t, int64_t) {
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  for (int64_t o = 0; o + 128 <= bytes; o += 128) {
    if (kDist) {
      _mm_prefetch(reinterpret_cast<const char*>(p + o + kDist), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(p + o + kDist + 64), _MM_HINT_T0);
    }
    a = _mm512_add_epi64(a, _mm512_load_si512(p + o));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + o + 64));
  }
  return _mm512_reduce_add_epi64(_mm512_add_epi64(a, b));
}
// runs[i]: byte offset of the i-th run read; `ahead` runs on are prefetched line for line.
template <int kHint, int kAhead>
uint64_t runs(const uint8_t* p, int64_t, const int64_t* order, int64_t n, int64_t run) {
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* r = p + order[i];
    const uint8_t* f = kAhead && i + kAhead < n ? p + order[i + kAhead] : nullptr;
    for (int64_t o = 0; o < run; o += 128) {
      if (f) {
        _mm_prefetch(reinterpret_cast<const char*>(f + o), _mm_hint(kHint));
        _mm_prefetch(reinterpret_cast<const char*>(f + o + 64), _mm_hint(kHint));
      }
      a = _mm512_add_epi64(a, _mm512_load_si512(r + o));
      b = _mm512_add_epi64(b, _mm512_load_si512(r + o + 64));
    }
  }
  return _mm512_reduce_add_epi64(_mm512_add_epi64(a, b));
}
using Fn = uint64_t (*)(const uint8_t*, int64_t, const int64_t*, int64_t, int64_t);
int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 2;
  const int64_t bytes = (argc > 2 ? atoll(argv[2]) : 1280) << 20;
  const int64_t run = argc > 3 ? atoll(argv[3]) : 4096;
  const int reps = argc > 4 ? atoi(argv[4]) : 3;
  auto* buf = static_cast<uint8_t*>(aligned_alloc(1 << 21, bytes));
  madvise(buf, bytes, MADV_HUGEPAGE);
  for (int64_t i = 0; i < bytes / 8; ++i) reinterpret_cast<uint64_t*>(buf)[i] = i;
  // Each thread's runs of its half, shuffled.
  const int64_t part = bytes / threads / run * run, n = part / run;
  std::vector<std::vector<int64_t>> order(threads, std::vector<int64_t>(n));
  std::mt19937_64 rng(59);
  for (int t = 0; t < threads; ++t) {
    std::iota(order[t].begin(), order[t].end(), 0);
    std::shuffle(order[t].begin(), order[t].end(), rng);
    for (auto& o : order[t]) o *= run;
  }
  struct V {
    const char* name;
    Fn f;
  } vs[] = {{"seq plain", seq<0>},           {"seq t0 +1KiB", seq<1024>},
            {"runs none", runs<3, 0>},       {"runs t0 1 ahead", runs<3, 1>},
            {"runs t0 2 ahead", runs<3, 2>}, {"runs t1 1 ahead", runs<2, 1>},
            {"runs t1 2 ahead", runs<2, 2>}};
  volatile uint64_t sink = 0;
  for (int rep = 0; rep < reps; ++rep)
    for (const V& v : vs) {
      std::vector<double> t;
      for (int pass = 0; pass < 4; ++pass) {
        std::vector<std::thread> ts;
        std::vector<uint64_t> sums(threads);
        const double t0 = now();
        for (int th = 0; th < threads; ++th)
          ts.emplace_back(
              [&, th] { sums[th] = v.f(buf + th * part, part, order[th].data(), n, run); });
        for (auto& x : ts) x.join();
        if (pass) t.push_back(now() - t0);
        for (auto s : sums) sink = sink + s;
      }
      std::sort(t.begin(), t.end());
      printf("%d threads run %5lld %-16s %6.1f GB/s (best %6.1f)\n", threads, (long long)run,
             v.name, part * threads / t[1] * 1e-9, part * threads / t[0] * 1e-9);
      fflush(stdout);
    }
}
