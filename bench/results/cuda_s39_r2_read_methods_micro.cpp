// Session 39: read loops over a 1 or 4 GiB buffer on N threads (argv 1, 2): plain 64-byte sums,
// prefetcht0 16 or 64 lines ahead, 2/4/8 streams a thread; GB/s of the second-fastest of 4 passes.
// g++ -O2 -o rd cuda_s39_r2_read_methods_micro.cpp -lpthread
#include <immintrin.h>
#include <sys/mman.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
using namespace std;
static double now() {
  return chrono::duration<double>(chrono::steady_clock::now().time_since_epoch()).count();
}
__attribute__((target("avx512f"))) uint64_t sum_plain(const uint8_t* p, long n) {
  __m512i a = _mm512_setzero_si512(), b = a;
  for (long o = 0; o < n; o += 128) {
    a = _mm512_add_epi64(a, _mm512_load_si512(p + o));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + o + 64));
  }
  return _mm512_reduce_add_epi64(_mm512_add_epi64(a, b));
}
template <int D>
__attribute__((target("avx512f"))) uint64_t sum_pf(const uint8_t* p, long n) {
  __m512i a = _mm512_setzero_si512(), b = a;
  for (long o = 0; o < n; o += 128) {
    _mm_prefetch((const char*)p + o + D * 64, _MM_HINT_T0);
    _mm_prefetch((const char*)p + o + D * 64 + 64, _MM_HINT_T0);
    a = _mm512_add_epi64(a, _mm512_load_si512(p + o));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + o + 64));
  }
  return _mm512_reduce_add_epi64(_mm512_add_epi64(a, b));
}
// S streams: split region into S parts read in lockstep
template <int S>
__attribute__((target("avx512f"))) uint64_t sum_streams(const uint8_t* p, long n) {
  __m512i a[S];
  for (int s = 0; s < S; s++) a[s] = _mm512_setzero_si512();
  long part = n / S / 64 * 64;
  for (long o = 0; o < part; o += 64)
    for (int s = 0; s < S; s++) a[s] = _mm512_add_epi64(a[s], _mm512_load_si512(p + s * part + o));
  __m512i t = a[0];
  for (int s = 1; s < S; s++) t = _mm512_add_epi64(t, a[s]);
  return _mm512_reduce_add_epi64(t);
}
int main(int argc, char** argv) {
  int T = atoi(argv[1]);
  long bytes = (argc > 2 ? atol(argv[2]) : 1L) << 30;
  uint8_t* m = (uint8_t*)aligned_alloc(1 << 21, bytes);
  madvise(m, bytes, MADV_HUGEPAGE);
  memset(m, 1, bytes);
  using F = uint64_t (*)(const uint8_t*, long);
  vector<pair<const char*, F>> fs = {{"plain", sum_plain},     {"pf16", sum_pf<16>},
                                     {"pf64", sum_pf<64>},     {"str2", sum_streams<2>},
                                     {"str4", sum_streams<4>}, {"str8", sum_streams<8>}};
  volatile uint64_t sink = 0;
  for (int round = 0; round < 3; round++)
    for (auto& [name, f] : fs) {
      vector<double> ts;
      for (int rep = 0; rep < 4; rep++) {
        vector<thread> th;
        double t0 = now();
        for (int t = 0; t < T; t++)
          th.emplace_back([&, t] {
            long part = bytes / T / 4096 * 4096;
            sink += f(m + t * part, part);
          });
        for (auto& x : th) x.join();
        ts.push_back(now() - t0);
      }
      sort(ts.begin(), ts.end());
      printf("%s %.1f  ", name, bytes / ts[1] * 1e-9);
      if (&f == &fs.back().second) printf("\n");
    }
}
