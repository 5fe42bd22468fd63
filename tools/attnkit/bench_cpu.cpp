// `attnkit bench --device cpu`: CPU_FLASH prefill GFLOP/s and decode GB/s, one JSON object per
// line, beside two ceilings measured in the same run: OpenBLAS fp32 sgemm (loaded at run time,
// so the build needs no BLAS) and a multi-threaded read-bandwidth loop over more than 4x L3;
// decode rows also carry their own bytes read in their own runs with no arithmetic; decode_l2
// rows time one thread over a cache that stays in its L2 (the arithmetic without DRAM).
// Protocol: random inputs, one warm-up, median of the timed repeats, and a sampled fp64 check of
// each benchmarked configuration (rows of the very run that was timed) before a row counts.
#include <dlfcn.h>
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/numeric.hpp"
#include "backends/cpu_flash/cpu_flash_backend.hpp"
#include "bench.hpp"

namespace attnkit::cli {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double load_average() {
  double l = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &l) != 1) l = -1;
    std::fclose(f);
  }
  return l;
}

// The L3 this CPU's cores share, as the kernel lists it (sysfs), else glibc's figure, else 32 MB.
// sysfs first: on a 2-vCPU Zen 4 VM glibc reported 320 MiB where sysfs and lscpu give the 32 MiB
// of one CCD (session 39).
int64_t l3_bytes() {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", i);
    int level = 0;
    std::string size;
    if (std::ifstream(dir + "level") >> level && level == 3 &&
        std::ifstream(dir + "size") >> size && !size.empty()) {
      int64_t n = std::stoll(size);
      if (size.back() == 'K') n <<= 10;
      if (size.back() == 'M') n <<= 20;
      if (n > 0) return n;
    }
  }
  if (const long v = sysconf(_SC_LEVEL3_CACHE_SIZE); v > 0) return v;
  return int64_t(32) << 20;
}

// Fast deterministic random fill (xorshift), values ~U(-1, 1).
struct Rng {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  float next() {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return float(int64_t(s >> 40) - (int64_t(1) << 23)) / float(1 << 23);
  }
};

// ---- ceilings ---------------------------------------------------------------------------------

using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);

struct GemmCeiling {
  double gflops;
  std::string core;  // the kernel set OpenBLAS runs ("" when it cannot say)
  bool forced;       // chosen by OPENBLAS_CORETYPE here (see open_openblas)
};

void* dlopen_blas() {
  for (const char* name : {"libopenblas.so.0", "libopenblas.so", "libblas.so.3"})
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
  return nullptr;
}

std::string blas_core(void* lib) {
  auto fn = reinterpret_cast<const char* (*)()>(dlsym(lib, "openblas_get_corename"));
  const char* name = fn ? fn() : nullptr;
  return name ? name : "";
}

// OpenBLAS's run-time dispatch picks its kernels by CPU model, and a model newer than its tables
// gets the SSE3 "Prescott" kernels: 0.3.21 on Intel model 207 (AVX-512 BF16) ran sgemm at a fifth
// of its AVX-512 kernels' rate (bench/results/cpu_2026-12-01_s21_sgemm_cores.txt), so the prefill
// rows' fraction of the ceiling read 5x too high (session 20's figures). Where it reports Prescott
// on a CPU with AVX2 or AVX-512 (and OPENBLAS_CORETYPE is unset), the library is reloaded with the
// core type that the CPU's features match.
void* open_openblas(bool* forced) {
  *forced = false;
  void* lib = dlopen_blas();
  if (!lib || blas_core(lib) != "Prescott" || std::getenv("OPENBLAS_CORETYPE")) return lib;
  const cpu_flash::Isa isa = cpu_flash::detect_isa();
  const char* core = isa >= cpu_flash::Isa::kAvx512Bf16 ? "Cooperlake"
                     : isa == cpu_flash::Isa::kAvx512   ? "SkylakeX"
                     : isa == cpu_flash::Isa::kAvx2     ? "Haswell"
                                                        : nullptr;
  if (!core) return lib;
  dlclose(lib);  // unloads it (nothing else holds it), so that the reload reads the variable
  setenv("OPENBLAS_CORETYPE", core, 0);
  lib = dlopen_blas();
  *forced = lib && blas_core(lib) == core;
  return lib;
}

std::optional<GemmCeiling> sgemm_gflops(int n, int repeats) {
  bool forced = false;
  void* lib = open_openblas(&forced);
  if (!lib) return std::nullopt;
  auto fn = reinterpret_cast<SgemmFn>(dlsym(lib, "cblas_sgemm"));
  if (!fn) return std::nullopt;
  std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
  Rng r;
  for (auto& x : a) x = r.next();
  for (auto& x : b) x = r.next();
  constexpr int kRowMajor = 101, kNoTrans = 111;
  fn(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    const double t0 = now_s();
    fn(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    t.push_back(now_s() - t0);
  }
  return GemmCeiling{2.0 * n * double(n) * n / median(t) * 1e-9, blas_core(lib), forced};
}

// Sums `bytes` (a multiple of 64, 64-byte aligned): 64-byte loads where the CPU has AVX-512,
// 32-byte ones where it has AVX2, 8-byte ones elsewhere. On this 2-vCPU VM a core reads the
// decode's page runs at the rate its load width allows (s9: 21.4 GB/s with 64-byte loads, 16.8 with
// 32-byte and 16.6 with 8-byte ones; sequentially they differ by 1-2%;
// bench/results/cpu_2026-11-30_s9_*), so the ceilings use the widest loads the core has (AVX2 CPUs
// took 8-byte loads until session 71). kHint > 0: each line also prefetched kAhead bytes ahead
// (within the range; kHint 3 is prefetcht0, 2 prefetcht1).
template <int kHint = 0, int kAhead = 0>
inline void prefetch_ahead(const uint8_t* p, int64_t o, int64_t bytes) {
  if constexpr (kHint > 0)
    if (o + kAhead + 128 <= bytes) {
      __builtin_prefetch(p + o + kAhead, 0, kHint);
      __builtin_prefetch(p + o + kAhead + 64, 0, kHint);
    }
}
#if defined(__x86_64__)
template <int kHint = 0, int kAhead = 0>
__attribute__((target("avx512f"))) uint64_t sum_bytes_avx512(const uint8_t* p, int64_t bytes) {
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  int64_t o = 0;
  for (; o + 128 <= bytes; o += 128) {
    prefetch_ahead<kHint, kAhead>(p, o, bytes);
    a = _mm512_add_epi64(a, _mm512_load_si512(p + o));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + o + 64));
  }
  if (o < bytes) a = _mm512_add_epi64(a, _mm512_load_si512(p + o));
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(a, b));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}
template <int kHint = 0, int kAhead = 0>
__attribute__((target("avx2"))) uint64_t sum_bytes_avx2(const uint8_t* p, int64_t bytes) {
  __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
  for (int64_t o = 0; o < bytes; o += 64) {
    if (o % 128 == 0) prefetch_ahead<kHint, kAhead>(p, o, bytes);
    a = _mm256_add_epi64(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o)));
    b = _mm256_add_epi64(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o + 32)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(a, b));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}
#endif
template <int kHint = 0, int kAhead = 0>
uint64_t sum_bytes_scalar(const uint8_t* p, int64_t bytes) {
  const auto* w = reinterpret_cast<const uint64_t*>(p);
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int64_t i = 0; i + 4 <= bytes / 8; i += 4) {
    if (i % 16 == 0) prefetch_ahead<kHint, kAhead>(p, i * 8, bytes);
    s0 += w[i], s1 += w[i + 1], s2 += w[i + 2], s3 += w[i + 3];
  }
  return s0 + s1 + s2 + s3;
}
using SumBytesFn = uint64_t (*)(const uint8_t*, int64_t);
// The widest sum the CPU runs, with prefetches kAhead bytes ahead (kHint > 0) or none.
template <int kHint = 0, int kAhead = 0>
SumBytesFn sum_bytes() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return sum_bytes_avx512<kHint, kAhead>;
  if (__builtin_cpu_supports("avx2")) return sum_bytes_avx2<kHint, kAhead>;
#endif
  return sum_bytes_scalar<kHint, kAhead>;
}
// The width of sum_bytes' loads, for the ceiling row.
const char* sum_bytes_loads() {
#if defined(__x86_64__)
  if (sum_bytes() == sum_bytes_avx512<>) return "64-byte (AVX-512)";
  if (sum_bytes() == sum_bytes_avx2<>) return "32-byte (AVX2)";
#endif
  return "8-byte";
}
// The ways the read ceiling reads its buffer; it keeps the fastest. Until session 58 it was a
// plain loop of loads alone, while on the GPU host's 16 cores the decode rows read up to 1.43x its
// rate (rows that prefetch in software). On a 2-vCPU VM the ways' rates cross from pass to pass
// (2 threads: plain 25.6-37.4 GB/s, prefetched 20.0-38.0;
// bench/results/cpu_2026-12-06_s58_read_probe.txt), so each run measures them all.
struct ReadWay {
  const char* name;
  SumBytesFn sum;
};
std::vector<ReadWay> read_ways() {
  return {{"plain", sum_bytes()},
          {"prefetcht0 1 KiB ahead", sum_bytes<3, 1024>()},
          {"prefetcht0 2 KiB ahead", sum_bytes<3, 2048>()},
          {"prefetcht1 2 KiB ahead", sum_bytes<2, 2048>()}};
}

// Median seconds of `repeats` passes (after one warm-up pass, unless `warm_up` is false) in which
// `threads` threads each run read(th) at once; what they return is kept, so the reads cannot be
// dropped.
template <typename Read>
double parallel_read_seconds(int threads, int repeats, const Read& read, bool warm_up = true) {
  std::vector<double> t;
  volatile uint64_t sink = 0;
  for (int rep = warm_up ? 0 : 1; rep <= repeats; ++rep) {
    std::vector<std::thread> ts;
    std::vector<uint64_t> sums(size_t(threads), 0);
    const double t0 = now_s();
    for (int th = 0; th < threads; ++th) ts.emplace_back([&, th] { sums[size_t(th)] = read(th); });
    for (auto& x : ts) x.join();
    if (rep > 0) t.push_back(now_s() - t0);
    for (uint64_t s : sums) sink = sink + s;
  }
  return median(t);
}

// A large buffer from the host KV allocator, the memory a serving KV cache gets (huge pages
// where the kernel gives them).
struct BigBuffer {
  uint8_t* p = nullptr;
  size_t n = 0;
  void resize(size_t bytes) {
    release();
    p = static_cast<uint8_t*>(host_kv_allocator().allocate(bytes, 256));
    n = bytes;
  }
  void release() {
    if (p) host_kv_allocator().deallocate(p, n);
    p = nullptr;
    n = 0;
  }
  uint8_t* data() const { return p; }
  size_t size() const { return n; }
  uint8_t* begin() const { return p; }
  uint8_t* end() const { return p + n; }
  BigBuffer() = default;
  BigBuffer(const BigBuffer&) = delete;
  ~BigBuffer() { release(); }
};

// The share of [p, p + bytes) on transparent huge pages, from the AnonHugePages of the mappings
// it overlaps (/proc/self/smaps; each counted up to the overlap), or nullopt where that file
// cannot tell: not Linux, or a buffer under kHostHugePageBytes, which shares its mapping.
std::optional<double> huge_page_fraction(const void* p, size_t bytes) {
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps || bytes < kHostHugePageBytes) return std::nullopt;
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
  double overlap = 0, huge = 0;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long a = 0, b = 0, kb = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &a, &b) == 2 && line.find('-') < line.find(' '))
      overlap =
          a < hi && b > lo ? double(std::min<uintptr_t>(b, hi) - std::max<uintptr_t>(a, lo)) : 0;
    else if (overlap > 0 && std::sscanf(line.c_str(), "AnonHugePages: %lu kB", &kb) == 1)
      huge += std::min(overlap, double(kb) * 1024);
  }
  return huge / double(bytes);
}

// The sequential read ceiling: `threads` threads each sum one contiguous part of a buffer that the
// run keeps, so that each decode row can read it again beside its own calls
// (fraction_of_paired_bw), in the fastest of read_ways.
struct ReadCeiling {
  BigBuffer mem;  // the memory the KV caches below get
  int threads = 1;
  std::vector<ReadWay> ways = read_ways();
  size_t way = 0;  // the fastest (measure)
  ReadCeiling(int64_t bytes, int th) : threads(th) {
    const int64_t n = bytes / 64 * 8;  // 64-bit words, whole 64-byte lines
    mem.resize(size_t(n) * 8);
    uint64_t* const words = reinterpret_cast<uint64_t*>(mem.data());
    for (int64_t i = 0; i < n; ++i) words[i] = uint64_t(i);
  }
  // Each way's median GB/s over `repeats` rounds of one pass over the whole buffer per way (after
  // a warm-up round; round by round, so that the machine's drift reaches every way alike). Keeps
  // the fastest for pass_gbs.
  std::vector<double> measure(int repeats) {
    std::vector<std::vector<double>> t(ways.size());
    for (int round = 0; round <= repeats; ++round)
      for (size_t i = 0; i < ways.size(); ++i) {
        const double g = pass_of(ways[i].sum, int64_t(mem.size()));
        if (round > 0) t[i].push_back(g);
      }
    std::vector<double> gbs;
    for (size_t i = 0; i < ways.size(); ++i) {
      gbs.push_back(median(t[i]));
      if (gbs[i] > gbs[way]) way = i;
    }
    return gbs;
  }
  // One pass over the buffer's first `bytes` (all of it at most) the fastest way: its GB/s.
  double pass_gbs(int64_t bytes) const { return pass_of(ways[way].sum, bytes); }

 private:
  double pass_of(SumBytesFn sum, int64_t bytes) const {
    const int64_t lines = std::min<int64_t>(bytes, int64_t(mem.size())) / 64;
    const double sec = parallel_read_seconds(
        threads, 1,
        [&](int th) {
          const int64_t lo = lines * th / threads, hi = lines * (th + 1) / threads;
          return sum(mem.data() + lo * 64, (hi - lo) * 64);
        },
        false);
    return double(lines * 64) / sec * 1e-9;
  }
};

// ---- attention configurations ----------------------------------------------------------------

struct Shape {
  const char* kind;  // prefill | decode | decode_l2 (one thread, the cache in its L2) | mla_decode
  int batch, q_len, kv_len, heads, kv_heads, head_size;
  DType dtype;
  KvCacheDType kv_dtype;
  bool causal;
  int page = 16;  // KV block size (tokens); each (block, KV head) is one contiguous run
  std::vector<int> lens = {};  // a ragged batch: each sequence's keys (kv_len is the longest)
  std::string lens_text = {};  // ... as "1x65536+63x1024", the row's batch_lens
  int head_size_v = 0;         // MLA (> 0): V is the first head_size_v elements of each K row
  int len(int seq) const { return lens.empty() ? kv_len : lens[size_t(seq)]; }
  int dv() const { return head_size_v ? head_size_v : head_size; }
  // A --decode-grid batch's shape: its sequences' lengths, and the ragged ones' text.
  static Shape from_grid(const char* kind, const DecodeBatch& d, int q_len, int heads, int kv_heads,
                         int head_size, KvCacheDType kv_dtype) {
    Shape s{kind,      int(d.lens.size()), q_len,    d.longest(), heads, kv_heads,
            head_size, DType::kBFloat16,   kv_dtype, true};
    if (d.ragged()) {
      s.lens = d.lens;
      s.lens_text = d.text;
    }
    return s;
  }
  int64_t total_keys() const {
    int64_t n = 0;
    for (int b = 0; b < batch; ++b) n += len(b);
    return n;
  }
  // (query, key) pairs the mask lets through, summed over the sequences. A causal row whose
  // queries are the whole sequence (prefill) counts half of q x keys, the convention the issue's
  // targets and the GPU peers use; q < keys (speculative decode) counts exactly, bottom-right
  // aligned: token i of q sees keys - q + i + 1 keys. Halving those instead (as until session 74)
  // under-stated the 4-token row's GFLOP/s by ~2x.
  double visible_pairs() const {
    double n = 0;
    for (int b = 0; b < batch; ++b) {
      const double k = len(b), q = q_len;
      n += !causal ? q * k : q >= k ? q * k / 2 : q * k - q * (q - 1) / 2;
    }
    return n;
  }
  // K and V bytes of every sequence's keys (MLA: the latent rows only).
  int64_t cache_bytes() const {
    return total_keys() * kv_heads * (head_size_v ? 1 : 2) *
           kv_bytes_per_head_vector(kv_dtype, dtype, head_size);
  }
};

float act_to_float(const void* p, DType dt, int64_t i) {
  if (dt == DType::kFloat32) return static_cast<const float*>(p)[i];
  const uint16_t b = static_cast<const uint16_t*>(p)[i];
  return dt == DType::kFloat16 ? fp16_bits_to_float(b) : bf16_bits_to_float(b);
}

struct BenchRun {
  std::vector<uint8_t> q, out;
  BigBuffer kbuf, vbuf;
  std::vector<int32_t> cu, used, table;
  std::vector<float> kscale, vscale;
  std::vector<uint8_t> ws;
  AttentionArgs a;
};

// Builds a paged cache (HND, block s.page) filled with random values. Its block tables take the
// blocks in a shuffled order, as a serving cache hands them out after a while (and as the cuda
// bench does), or, `sequential`, each sequence's blocks one after the other.
void build(const Shape& s, BenchRun& r, bool sequential, uint32_t seed) {
  const int bs = s.page, blocks_per_seq = (s.kv_len + bs - 1) / bs;
  int nb = 0;  // every sequence's pages, its table row padded to the longest
  for (int b = 0; b < s.batch; ++b) nb += (s.len(b) + bs - 1) / bs;
  const int64_t row = kv_bytes_per_head_vector(s.kv_dtype, s.dtype, s.head_size);
  KvCacheView& kv = r.a.kv;
  kv.dtype = s.kv_dtype;
  kv.num_blocks = nb;
  kv.block_size = bs;
  kv.num_kv_heads = s.kv_heads;
  kv.head_size = s.head_size;
  kv.head_size_v = s.dv();
  kv.stride_token = kv.v_stride_token = row;
  kv.stride_head = kv.v_stride_head = row * bs;
  kv.stride_block = kv.v_stride_block = row * bs * s.kv_heads;
  const size_t bytes = size_t(kv.stride_block) * nb;
  r.kbuf.resize(bytes);
  if (!s.head_size_v) r.vbuf.resize(bytes);  // MLA reads V from the K rows
  Rng rng;
  const bool fp8 = s.kv_dtype == KvCacheDType::kFp8E4M3 || s.kv_dtype == KvCacheDType::kFp8E5M2;
  auto fill = [&](BigBuffer& b) {
    if (fp8) {
      for (auto& x : b)
        x = s.kv_dtype == KvCacheDType::kFp8E4M3 ? float_to_fp8_e4m3(rng.next() * 4)
                                                 : float_to_fp8_e5m2(rng.next() * 4);
    } else {
      auto* p = reinterpret_cast<uint16_t*>(b.data());
      for (size_t i = 0; i < b.size() / 2; ++i)
        p[i] = s.kv_dtype == KvCacheDType::kFloat16 ? float_to_fp16_bits(rng.next())
                                                    : float_to_bf16_bits(rng.next());
    }
  };
  fill(r.kbuf);
  fill(r.vbuf);
  kv.k = r.kbuf.data();
  kv.v = s.head_size_v ? nullptr : r.vbuf.data();
  if (fp8) {
    r.kscale = {0.25f};
    r.vscale = {0.3f};
    kv.scale_granularity = ScaleGranularity::kPerTensor;
    kv.k_scale = r.kscale.data();
    kv.v_scale = r.vscale.data();
  }
  r.cu.assign(1, 0);
  for (int b = 0; b < s.batch; ++b) r.cu.push_back(r.cu.back() + s.q_len);
  r.used.resize(size_t(s.batch));
  r.table.assign(size_t(s.batch) * blocks_per_seq, 0);
  std::vector<int32_t> order(static_cast<size_t>(nb));
  std::iota(order.begin(), order.end(), 0);
  if (!sequential) std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  for (int b = 0, next = 0; b < s.batch; ++b) {
    r.used[size_t(b)] = s.len(b);
    for (int j = 0; j < (s.len(b) + bs - 1) / bs; ++j)
      r.table[size_t(b) * blocks_per_seq + j] = order[size_t(next++)];
  }
  const int total_q = r.cu.back(), esz = dtype_bytes(s.dtype);
  r.q.resize(size_t(total_q) * s.heads * s.head_size * esz);
  r.out.resize(size_t(total_q) * s.heads * s.dv() * esz);
  for (int64_t i = 0; i < int64_t(r.q.size()) / esz; ++i) {
    const float v = rng.next() * 2;
    if (s.dtype == DType::kFloat32)
      reinterpret_cast<float*>(r.q.data())[i] = v;
    else
      reinterpret_cast<uint16_t*>(r.q.data())[i] =
          s.dtype == DType::kFloat16 ? float_to_fp16_bits(v) : float_to_bf16_bits(v);
  }
  AttentionArgs& a = r.a;
  a.q = r.q.data();
  a.q_stride_token = int64_t(s.heads) * s.head_size;
  a.q_stride_head = s.head_size;
  a.out = r.out.data();
  a.out_stride_token = int64_t(s.heads) * s.dv();
  a.out_stride_head = s.dv();
  a.batch.num_seqs = s.batch;
  a.batch.total_q = total_q;
  a.batch.max_seqlen_q = s.q_len;
  a.batch.max_seqlen_k = s.kv_len;
  a.batch.cu_seqlens_q = r.cu.data();
  a.batch.seqused_k = r.used.data();
  a.batch.block_table = r.table.data();
  a.batch.block_table_stride = blocks_per_seq;
  AttentionLayerParams& L = a.layer;
  L.num_heads = s.heads;
  L.num_kv_heads = s.kv_heads;
  L.head_size = s.head_size;
  L.head_size_v = s.dv();
  L.dtype = s.dtype;
  L.scale = 1.f / std::sqrt(float(s.head_size));
  L.causal = s.causal;
}

// fp64 check of sampled output rows of the timed run (first/last sequence, first/last token,
// first/last head). Returns the max abs error.
double sampled_error(const Shape& s, const BenchRun& r) {
  const AttentionArgs& a = r.a;
  const int g = s.heads / s.kv_heads, d = s.head_size, dv = s.dv();
  std::vector<float> k(static_cast<size_t>(d)), v(static_cast<size_t>(dv));
  double err = 0;
  for (int b : {0, s.batch - 1})
    for (int i : {0, s.q_len - 1})
      for (int h : {0, s.heads - 1}) {
        const int n = s.len(b), t = r.cu[size_t(b)] + i, p = n - s.q_len + i, kh = h / g;
        const int hi = s.causal ? std::min(p, n - 1) : n - 1;
        std::vector<double> x;
        for (int j = 0; j <= hi; ++j) {
          const int64_t slot =
              int64_t(r.table[size_t(b) * a.batch.block_table_stride + j / s.page]) * s.page +
              j % s.page;
          read_kv_cpu(a.kv, slot, kh, false, k.data());
          double dot = 0;
          for (int e = 0; e < d; ++e)
            dot += double(act_to_float(r.q.data(), s.dtype,
                                       int64_t(t) * a.q_stride_token + h * d + e)) *
                   k[e];
          x.push_back(dot * a.layer.scale);
        }
        double m = -INFINITY, z = 0;
        for (double xv : x) m = std::max(m, xv);
        for (double xv : x) z += std::exp(xv - m);
        std::vector<double> o(static_cast<size_t>(dv), 0.0);
        for (int j = 0; j <= hi; ++j) {
          const int64_t slot =
              int64_t(r.table[size_t(b) * a.batch.block_table_stride + j / s.page]) * s.page +
              j % s.page;
          read_kv_cpu(a.kv, slot, kh, true, v.data());
          const double w = std::exp(x[size_t(j)] - m) / z;
          for (int e = 0; e < dv; ++e) o[size_t(e)] += w * v[size_t(e)];
        }
        for (int e = 0; e < dv; ++e)
          err = std::max(
              err, std::abs(double(act_to_float(r.out.data(), s.dtype,
                                                int64_t(t) * a.out_stride_token + h * dv + e)) -
                            o[size_t(e)]));
      }
  return err;
}

// The decode's memory pattern without its arithmetic: the same threads read the same K and V
// bytes in the order CPU_FLASH's decode items fetch them, work split over the threads by (item,
// tile). Per 64-key tile of an item, for each of its KV heads (one, or those it takes in
// lockstep: cpu_flash::lockstep_heads) the head's K rows block by block, then its V rows; where
// lockstep items prefetch in address order (cpu_flash::lockstep_prefetch_in_order), block by
// block the rows of all the item's heads (back to back in HND), K then V. The decode row's time
// over this one is what its arithmetic adds on this machine (on a core whose loads do not overlap
// the arithmetic, the two add up).
double pattern_read_gbs(const Shape& s, const BenchRun& r, int threads, int repeats, int group) {
  const KvCacheView& kv = r.a.kv;
  const int64_t row = kv.stride_token;
  const int groups = (s.kv_heads + group - 1) / group;
  const bool by_block = group > 1 && cpu_flash::lockstep_prefetch_in_order();
  // (sequence, item's KV heads, 64-key tile) units, numbered sequence by sequence
  std::vector<int64_t> first_unit(size_t(s.batch) + 1, 0);
  for (int b = 0; b < s.batch; ++b)
    first_unit[size_t(b) + 1] = first_unit[size_t(b)] + int64_t(groups) * ((s.len(b) + 63) / 64);
  const int64_t units = first_unit.back();
  const int bps = r.a.batch.block_table_stride;
  const SumBytesFn sum = sum_bytes();
  const double sec = parallel_read_seconds(threads, repeats, [&](int th) {
    uint64_t acc = 0;
    for (int64_t u = units * th / threads; u < units * (th + 1) / threads; ++u) {
      const int seq =
          int(std::upper_bound(first_unit.begin(), first_unit.end(), u) - first_unit.begin()) - 1;
      const int64_t tiles = (s.len(seq) + 63) / 64, v = u - first_unit[size_t(seq)];
      const int h0 = int(v / tiles) * group, h1 = std::min(s.kv_heads, h0 + group);
      const int tile = int(v % tiles), j1 = std::min(s.len(seq), (tile + 1) * 64);
      // heads [ha, hb)'s rows of the tile in `base`, block by block
      auto read = [&](const void* base, int ha, int hb) {
        for (int j = int(tile * 64); j < j1;) {
          const int blk = r.table[size_t(seq) * bps + j / s.page], off = j % s.page;
          const int n = std::min(s.page - off, j1 - j);
          for (int h = ha; h < hb; ++h)
            acc += sum(static_cast<const uint8_t*>(base) + blk * kv.stride_block +
                           h * kv.stride_head + off * row,
                       n * row);
          j += n;
        }
      };
      for (int h = h0; h < h1; h = by_block ? h1 : h + 1) {
        const int hb = by_block ? h1 : h + 1;
        read(kv.k, h, hb);
        read(kv.v, h, hb);
      }
    }
    return acc;
  });
  return double(r.kbuf.size() + r.vbuf.size()) / sec * 1e-9;
}

double tolerance(DType dt) {
  return dt == DType::kFloat32 ? 1e-3 : dt == DType::kFloat16 ? 8e-3 : 3e-2;
}

}  // namespace

int run_cpu_bench(const BenchOptions& o) {
  std::optional<std::ofstream> file;
  if (o.out_path) {
    file.emplace(*o.out_path, std::ios::app);
    if (!*file) throw InvalidArgument(fmt::format("bench: cannot open --out {}", *o.out_path));
  }
  auto emit = [&](json row) {
    row["load_avg"] = load_average();
    const std::string line = row.dump();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (file) *file << line << "\n" << std::flush;
  };
  // CPUs this process may use (taskset respected), as CPU_FLASH's thread pool counts them.
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  if (cpu_set_t set; sched_getaffinity(0, sizeof(set), &set) == 0) threads = CPU_COUNT(&set);
  if (const char* e = std::getenv("ATTNKIT_NUM_THREADS"); e && std::atoi(e) > 0)
    threads = std::atoi(e);

  // Ceilings, measured now.
  const int gemm_n = o.quick ? 1024 : 2048;
  const std::optional<GemmCeiling> ceiling = sgemm_gflops(gemm_n, o.quick ? 3 : 7);
  const double* gemm = ceiling ? &ceiling->gflops : nullptr;
  emit({{"kind", "ceiling"},
        {"name", "sgemm_fp32_openblas"},
        {"n", gemm_n},
        {"gflops", gemm ? json(*gemm) : json(nullptr)},
        {"openblas_core", ceiling ? json(ceiling->core) : json(nullptr)},
        {"note", !ceiling          ? "libopenblas not found"
                 : ceiling->forced ? "cblas_sgemm from libopenblas, median; OpenBLAS took its "
                                     "Prescott fallback for this CPU, so the core type was set to "
                                     "the one its features match (OPENBLAS_CORETYPE)"
                                   : "cblas_sgemm from libopenblas, median"}});
  const int64_t l3 = l3_bytes();
  const int64_t bw_bytes =
      o.quick ? (int64_t(256) << 20) : std::max(int64_t(4) * l3 + (64 << 20), int64_t(1) << 30);
  ReadCeiling ceiling_read(bw_bytes, threads);
  const std::vector<double> way_gbs = ceiling_read.measure(o.quick ? 3 : 5);
  const double bw = way_gbs[ceiling_read.way];
  json ways = json::object();
  for (size_t i = 0; i < way_gbs.size(); ++i) ways[ceiling_read.ways[i].name] = way_gbs[i];
  emit({{"kind", "ceiling"},
        {"name", "read_bw"},
        {"bytes", bw_bytes},
        {"l3_bytes", l3},
        {"threads", threads},
        {"loads", sum_bytes_loads()},
        {"way", ceiling_read.ways[ceiling_read.way].name},
        {"ways_gbs", ways},
        {"gbs", bw}});

  if (const std::optional<double> r = cpu_flash::bf16_dot_issue_ratio())
    emit({{"kind", "probe"},
          {"name", "vdpbf16ps_over_fma_issue_rate"},
          {"ratio", *r},
          {"bf16_products", cpu_flash::bf16_dots_pay() ? "vdpbf16ps" : "fp32 fma"}});

  std::vector<Shape> shapes;
  const bool pre = o.suite == "prefill" || o.suite == "all",
             dec = o.suite == "decode" || o.suite == "all",
             mla = o.suite == "mla" || o.suite == "all";
  const auto bf = DType::kBFloat16;
  const auto kbf = KvCacheDType::kBFloat16;
  if (pre) {
    const int n = o.quick ? 512 : 2048;
    shapes.push_back({"prefill", 1, n, n, 8, 8, 128, bf, kbf, false});
    shapes.push_back({"prefill", 1, n, n, 8, 8, 128, bf, kbf, true});
    shapes.push_back({"prefill", 1, n, n, 32, 8, 128, bf, kbf, true});
    shapes.push_back(
        {"prefill", 1, n / 2, n / 2, 8, 8, 128, DType::kFloat32, KvCacheDType::kAuto, false});
    shapes.push_back(
        {"prefill", 1, n / 2, n / 2, 8, 8, 128, DType::kFloat16, KvCacheDType::kFloat16, false});
  }
  if (dec) {
    // Caches of at least the read ceiling's 4 x L3 + 64 MB in the full grid (B x kv_len x Hkv x
    // 2 x D x bytes), so that no row is served from L3: sized to 1.25 x L3, the fp8 32/4 and
    // ragged caches (266-268 MB) fitted the H200 host's 300 MB L3.
    const int64_t dram = 4 * l3 + (64 << 20);
    const int kv_len = o.quick ? 2048 : 8192;
    const int64_t cache = Shape{"decode", 16, 1, kv_len, 32, 8, 128, bf, kbf, true}.cache_bytes();
    const int b = o.quick ? 4 : int(std::max<int64_t>(16, (dram + cache - 1) / cache * 16));
    if (custom_decode_rows(o)) {
      // The user's shapes instead (the grid defaults to the first row's batch x context), each
      // over a bf16 and an fp8 cache, as the cuda bench's grid runs them.
      const std::string grid =
          o.decode_grid.empty() ? fmt::format("{}x{}", b, kv_len) : o.decode_grid;
      for (const DecodeBatch& d : parse_decode_grid(grid))
        for (const auto& [hq, hkv] : parse_heads_list(o.decode_heads))
          for (KvCacheDType kv : {kbf, KvCacheDType::kFp8E4M3})
            shapes.push_back(Shape::from_grid("decode", d, o.decode_q, hq, hkv, o.decode_head, kv));
    } else {
      shapes.push_back({"decode", b, 1, kv_len, 32, 8, 128, bf, kbf, true});
      if (!o.quick)  // longer contiguous (block, head) runs: what a larger block size buys
        for (int page : {64, 128})
          shapes.push_back({"decode", b, 1, kv_len, 32, 8, 128, bf, kbf, true, page});
      shapes.push_back({"decode", b / 4, 1, kv_len, 32, 32, 128, bf, kbf, true});
      shapes.push_back({"decode", b * 2, 1, kv_len, 32, 8, 128, bf, KvCacheDType::kFp8E4M3, true});
      // fp8 items of 8 rows (GQA 8): where AMX is present, staged to bf16 rows for its tiles; four
      // times the sequences, so as many cache bytes as the bf16 rows.
      shapes.push_back({"decode", b * 4, 1, kv_len, 32, 4, 128, bf, KvCacheDType::kFp8E4M3, true});
      shapes.push_back(
          {"decode", b, 1, kv_len, 32, 8, 128, DType::kFloat16, KvCacheDType::kFloat16, true});
      // Speculative decoding: 4 query tokens per sequence with GQA 8, 32 rows per work item (two
      // 16-row blocks on the AMX direct path); half the KV heads, so twice the sequences.
      shapes.push_back({"decode", b * 2, 4, kv_len, 32, 4, 128, bf, kbf, true});
      // Split-KV: one sequence, one KV head, as many cache bytes as the GQA rows (above L3; at
      // 4 x kv_len it fitted in L3 and was no DRAM row).
      const int split_len = o.quick ? kv_len * 4 : b * kv_len * 8;
      shapes.push_back({"decode", 1, 1, split_len, 16, 1, 128, bf, kbf, true});
      // A ragged serving batch (perf-anchors' load-balance case, one 64k + 63 x 1k): a long
      // sequence's items are longer than a thread's share once there are many threads. Where its
      // 266 MB are less than `dram`, every length doubles until they are not.
      {
        Shape r{"decode", 64, 1, o.quick ? 16384 : 65536, 32, 4, 128, bf, kbf, true};
        for (;; r.kv_len *= 2) {
          r.lens.assign(64, r.kv_len / 64);
          r.lens[0] = r.kv_len;
          if (o.quick || r.cache_bytes() >= dram) break;
        }
        r.lens_text = fmt::format("1x{}+63x{}", r.kv_len, r.kv_len / 64);
        shapes.push_back(r);
      }
      // The arithmetic alone: one thread over a 1 MB cache (one KV head, GQA 4) that stays in its
      // L2. On a machine whose cores fetch from DRAM no faster than they compute, the DRAM rows
      // hide changes in here (bench/NOTES.md, CPU s10).
      shapes.push_back({"decode_l2", 1, 1, 2048, 4, 1, 128, bf, kbf, true});
      shapes.push_back({"decode_l2", 1, 1, 4096, 4, 1, 128, bf, KvCacheDType::kFp8E4M3, true});
      // The same for the rows AMX tiles take: 8 rows (GQA 8), 16 (16/1) and 32 (4 tokens, GQA 8).
      shapes.push_back({"decode_l2", 1, 1, 512, 32, 4, 128, bf, kbf, true});
      shapes.push_back({"decode_l2", 1, 1, 2048, 16, 1, 128, bf, kbf, true});
      shapes.push_back({"decode_l2", 1, 4, 2048, 8, 1, 128, bf, kbf, true});
    }
  }

  if (mla) {
    // MLA decode over a DeepSeek-V3 latent cache (576 = 512 latent + 64 rope; V the first 512 of
    // each K row), as the cuda bench's MLA rows: 128 heads (one device) and 16 (8-way tensor
    // parallelism). Each key's row meets every head, so these rows are held to the GEMM rate.
    const std::string grid = !o.decode_grid.empty() ? o.decode_grid
                             : o.quick              ? "2x2048"
                                                    : "16x8192";
    for (KvCacheDType kv : {kbf, KvCacheDType::kFp8E4M3})
      for (int hq : {128, 16})
        for (const DecodeBatch& d : parse_decode_grid(grid)) {
          Shape s = Shape::from_grid("mla_decode", d, 1, hq, 1, 576, kv);
          s.head_size_v = 512;
          shapes.push_back(std::move(s));
        }
  }

  auto backend = make_cpu_flash_backend();
  CpuFlashOptions one_thread;
  one_thread.num_threads = 1;
  auto backend_1t = make_cpu_flash_backend(one_thread);
  // --interleave-isa: a backend per variant, at the pool's thread count and at one thread.
  struct Variant {
    cpu_flash::Isa isa;
    std::unique_ptr<AttentionBackend> pool, one;
  };
  std::vector<Variant> variants;
  if (!o.interleave_isa.empty())
    for (cpu_flash::Isa isa : parse_isa_list(o.interleave_isa)) {
      CpuFlashOptions v;
      v.isa = isa;
      auto pool = make_cpu_flash_backend(v);
      v.num_threads = 1;
      variants.push_back({isa, std::move(pool), make_cpu_flash_backend(v)});
    }
  const char* isa_env = std::getenv("ATTNKIT_CPU_ISA");
  const std::string isa =
      isa_env && *isa_env ? isa_env : std::string(cpu_flash::to_string(cpu_flash::detect_isa()));
  cpu_set_t all_cpus;
  const bool have_affinity = sched_getaffinity(0, sizeof(all_cpus), &all_cpus) == 0;
  uint32_t seed = o.seed.value_or(1);  // each shape's block order
  for (const Shape& s : shapes) {
    const bool in_l2 = std::string_view(s.kind) == "decode_l2";
    AttentionBackend& be = in_l2 ? *backend_1t : *backend;
    // decode_l2 runs on the calling thread: kept on one core, so that its L2 keeps the cache.
    if (const int cpu = sched_getcpu(); in_l2 && have_affinity && cpu >= 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof(one), &one);
    } else if (have_affinity) {
      sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
    }
    BenchRun r;
    const uint32_t row_seed = seed++;
    build(s, r, o.sequential_blocks, row_seed);
    be.plan(r.a.batch, r.a.layer);
    r.ws.resize(be.workspace_bytes() + 64);
    r.a.workspace = r.ws.data();
    be.run(r.a);  // warm-up, and the run the check samples
    const double err = sampled_error(s, r);
    const bool ok = err <= tolerance(s.dtype);
    const int repeats = o.quick ? 3 : (s.kind[0] == 'p' ? 5 : in_l2 ? 201 : 9);
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
      const double t0 = now_s();
      be.run(r.a);
      t.push_back(now_s() - t0);
    }
    const double sec = median(t);
    // Q.K over head_size, P.V over head_size_v (the same for all but MLA).
    const double flops = 2.0 * s.heads * s.visible_pairs() * (s.head_size + s.dv());
    const double kv_bytes = double(r.kbuf.size() + r.vbuf.size());
    // The variants in turn, `per` calls each a round, the first of a round rotating: a call's
    // median time per variant. Across processes this 2-vCPU VM's rates moved up to 2x between
    // runs of one binary, so only calls interleaved in one process compare variants
    // (bench/NOTES.md, session 52).
    json interleaved;
    if (!variants.empty()) {
      std::vector<std::vector<double>> vt(variants.size());
      for (Variant& v : variants) {
        AttentionBackend& vb = in_l2 ? *v.one : *v.pool;
        vb.plan(r.a.batch, r.a.layer);
        if (vb.workspace_bytes() + 64 > r.ws.size()) r.ws.resize(vb.workspace_bytes() + 64);
      }
      r.a.workspace = r.ws.data();
      const int per = in_l2 ? 20 : 2, n = int(variants.size());
      for (int round = 0; round < 12; ++round)
        for (int k = 0; k < n; ++k) {
          const int vi = (k + round) % n;
          AttentionBackend& vb = in_l2 ? *variants[vi].one : *variants[vi].pool;
          for (int i = 0; i < per; ++i) {
            const double t0 = now_s();
            vb.run(r.a);
            vt[vi].push_back(now_s() - t0);
          }
        }
      for (int vi = 0; vi < n; ++vi) {
        const double m = median(vt[vi]);
        AttentionBackend& vb = in_l2 ? *variants[vi].one : *variants[vi].pool;
        vb.run(r.a);  // its output checked as the row's own
        const double verr = sampled_error(s, r);
        interleaved[std::string(cpu_flash::to_string(variants[vi].isa))] = {
            {"time_ms", m * 1e3},
            {"gbs", kv_bytes / m * 1e-9},
            {"gflops", flops / m * 1e-9},
            {"max_abs_err", verr},
            {"verified", verr <= tolerance(s.dtype)}};
      }
    }
    json row{{"kind", s.kind},
             {"backend", "CPU_FLASH"},
             {"isa", isa},
             {"threads", in_l2 ? 1 : threads},
             {"batch", s.batch},
             {"q_len", s.q_len},
             {"kv_len", s.kv_len},
             {"heads", s.heads},
             {"kv_heads", s.kv_heads},
             {"head_size", s.head_size},
             {"head_size_v", s.dv()},
             {"dtype", to_string(s.dtype)},
             {"kv_dtype",
              s.kv_dtype == KvCacheDType::kAuto ? "float32" : std::string(to_string(s.kv_dtype))},
             {"causal", s.causal},
             {"page", s.page},
             {"block_table", o.sequential_blocks ? "sequential" : "shuffled"},
             {"seed", row_seed},
             {"time_ms", sec * 1e3},
             {"repeats", repeats},
             {"gflops", flops / sec * 1e-9},
             {"gbs", kv_bytes / sec * 1e-9},
             {"kv_bytes", kv_bytes},
             {"kv_over_l3", kv_bytes / double(l3)},
             {"verified", ok},
             {"max_abs_err", err}};
    if (!s.lens.empty()) row["batch_lens"] = s.lens_text;
    if (!interleaved.is_null()) row["interleaved_isa"] = interleaved;
    // Over 4 KiB pages every (block, KV head) run costs a page walk (src/kv/storage.cpp).
    const auto kh = huge_page_fraction(r.kbuf.data(), r.kbuf.size());
    const auto vh = s.head_size_v ? kh : huge_page_fraction(r.vbuf.data(), r.vbuf.size());
    if (kh && vh) row["kv_huge_page_fraction"] = (*kh + *vh) / 2;
    // The ceiling a kind is held to: prefill the GEMM rate, decode the read bandwidth.
    if (ok && (s.kind[0] == 'p' || s.head_size_v) && gemm)
      row["fraction_of_gemm"] = flops / sec * 1e-9 / *gemm;
    if (ok && std::string_view(s.kind) == "decode") {
      // KV heads an item takes (the planner's rule; a decode row's sequences are one item a KV
      // head each wherever that rule groups them) and how such items fetch their tiles.
      const int group = cpu_flash::lockstep_heads(
          s.q_len * (s.heads / s.kv_heads), int64_t(s.batch) * s.kv_heads, threads, s.kv_heads,
          cpu_flash::lockstep_max_head_rows(threads));
      row["lockstep_heads"] = group;
      row["lockstep_prefetch"] =
          cpu_flash::lockstep_prefetch_in_order() ? "address_order" : "turns";
      row["fraction_of_bw"] = kv_bytes / sec * 1e-9 / bw;
      const double pattern = pattern_read_gbs(s, r, threads, repeats, group);
      row["pattern_read_gbs"] = pattern;
      row["fraction_of_pattern_read"] = kv_bytes / sec * 1e-9 / pattern;
      // The sequential ceiling read beside the row's own calls: `repeats` pairs of a call and a
      // read pass over as many bytes (which goes first alternates); per pair the call's GB/s over
      // the pass's. On 2-vCPU VMs the read rate moved by up to 2x between runs and within one
      // (25-50 GB/s), so the run's one ceiling, measured first, put the same kernel at 0.41-0.93x
      // (bench/NOTES.md, session 38); a pair sees the machine as it is at the time.
      std::vector<double> ratio, paired;
      for (int i = 0; i < repeats; ++i) {
        double call_s = 0, read_gbs = 0;
        auto call = [&] {
          const double t0 = now_s();
          be.run(r.a);
          call_s = now_s() - t0;
        };
        auto read = [&] { read_gbs = ceiling_read.pass_gbs(int64_t(kv_bytes)); };
        if (i % 2 == 0) {
          read();
          call();
        } else {
          call();
          read();
        }
        paired.push_back(read_gbs);
        ratio.push_back(kv_bytes / call_s * 1e-9 / read_gbs);
      }
      row["read_bw_paired_gbs"] = median(paired);
      row["fraction_of_paired_bw"] = median(ratio);
    }
    emit(row);
  }
  return 0;
}

}  // namespace attnkit::cli
