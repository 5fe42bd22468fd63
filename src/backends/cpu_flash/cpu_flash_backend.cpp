#include "backends/cpu_flash/cpu_flash_backend.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/log.hpp"
#include "backends/common/validate.hpp"
#include "backends/cpu_flash/capabilities.hpp"
#include "backends/cpu_flash/kernel.hpp"
#include "backends/cpu_flash/thread_pool.hpp"

namespace attnkit {
namespace cpu_flash {

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx512Bf16:
      return "avx512_bf16";
    case Isa::kAmxBf16:
      return "amx_bf16";
  }
  return "?";
}

namespace {
#if defined(__x86_64__)
// CPUID.(7,0):EDX bits 22 (AMX-BF16) and 24 (AMX-TILE), then Linux's opt-in for the tile data
// state (ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 18); false where any step fails.
bool amx_usable() {
  static const bool ok = [] {
    unsigned a = 7, b = 0, c = 0, d = 0;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    if (!((d >> 22) & 1) || !((d >> 24) & 1)) return false;
    return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
  }();
  return ok;
}
#else
bool amx_usable() { return false; }
#endif

bool cpu_has_vbmi() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512vbmi");
#else
  return false;
#endif
}
}  // namespace

bool isa_supported(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  // __builtin_cpu_supports also checks that the OS saves the vector state (XCR0).
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512dq");
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return avx2;
    case Isa::kAvx512:
      return avx512;
    case Isa::kAvx512Bf16:
      return avx512 && __builtin_cpu_supports("avx512bf16");
    case Isa::kAmxBf16:
      return avx512 && __builtin_cpu_supports("avx512bf16") && cpu_has_vbmi() && amx_usable();
  }
  return false;
#else
  return isa == Isa::kScalar;
#endif
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> r;
  for (Isa i : kIsas)
    if (isa_supported(i)) r.push_back(i);
  return r;
}

Isa detect_isa() { return supported_isas().back(); }

std::optional<double> bf16_dot_issue_ratio() {
  if (!isa_supported(Isa::kAvx512Bf16)) return std::nullopt;
  return dpbf16_issue_ratio();
}

bool bf16_dots_pay() {
  const std::optional<double> r = bf16_dot_issue_ratio();
  return r && *r >= 0.75;
}

void stage_fp8_as_bf16(KvCacheDType dt, bool byte_tables, const uint8_t* codes, int rows, int d,
                       uint16_t* out) {
  if (dt != KvCacheDType::kFp8E4M3 && dt != KvCacheDType::kFp8E5M2)
    throw InvalidArgument(fmt::format(
        "stage_fp8_as_bf16: kv dtype {}, expected fp8_e4m3 or fp8_e5m2", to_string(dt)));
  if (rows < 0 || d <= 0 || d % 16 != 0)
    throw InvalidArgument(
        fmt::format("stage_fp8_as_bf16: {} rows of {} codes; expected rows >= 0 and d a positive "
                    "multiple of 16",
                    rows, d));
  if (!isa_supported(Isa::kAvx512Bf16))
    throw Unsupported("stage_fp8_as_bf16: this CPU lacks the AVX512_BF16 variant");
#if defined(__x86_64__)
  if (byte_tables && !cpu_has_vbmi())
    throw Unsupported("stage_fp8_as_bf16: the byte tables need AVX512_VBMI, which this CPU lacks");
#endif
  stage_fp8_rows_bf16(dt, byte_tables, codes, rows, d, out);
}

int lockstep_heads(int head_rows, int64_t single_items, int threads, int kv_heads,
                   int max_head_rows) {
  if (head_rows > std::min(max_head_rows, kLockstepHeadRows)) return 1;
  const int cap = int(std::clamp<int64_t>(single_items / (4 * int64_t(threads)), 1, kv_heads));
  return std::clamp(kLockstepRows / std::max(head_rows, 1), 1, cap);
}

namespace {
bool amd_cores() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool amd = __builtin_cpu_is("amd");
  return amd;
#else
  return false;
#endif
}
}  // namespace

int lockstep_max_head_rows(int threads) {
  return amd_cores() || threads <= kLockstepFewThreads ? kLockstepHeadRows : 1;
}

bool lockstep_prefetch_in_order() { return amd_cores(); }

const KernelFns& kernels_for(Isa isa) {
  switch (isa) {
    case Isa::kAmxBf16:
      return kernels_amx_bf16();
    case Isa::kAvx512Bf16:  // its VBMI build (the few-rows form's fp8 loader) where VBMI exists
      return cpu_has_vbmi() ? kernels_avx512_bf16_vbmi() : kernels_avx512_bf16();
    case Isa::kAvx512:
      return kernels_avx512();
    case Isa::kAvx2:
      return kernels_avx2();
    case Isa::kScalar:
      break;
  }
  return kernels_scalar();
}

}  // namespace cpu_flash

namespace {

using cpu_flash::WorkItem;

[[noreturn]] void fail(const std::string& what) { throw InvalidArgument("CPU_FLASH: " + what); }

// Head sizes the kernels take, as declared (capabilities.cpp: one SIMD row / one nvfp4 scale
// group per 16 dims, up to 576), for Q/K and V alike.
void check_head_sizes(const AttentionLayerParams& L) {
  const HeadSizeRule& rule = cpu_flash_capabilities().head_sizes;
  if (!rule.accepts(L.head_size) || !rule.accepts(L.head_size_v))
    throw Unsupported(
        fmt::format("CPU_FLASH: head_size {} / head_size_v {} not supported (expected {})",
                    L.head_size, L.head_size_v, rule.describe()));
}

// A cache whose rows could all start on 64-byte lines but do not (a base pointer or a stride
// off by a few bytes) is read correctly, but each row then spans one more line: one-thread bf16
// decode in L2 ran at 10.8-11.2 GB/s against 17.6-18.2 aligned (session 10). Said once.
void warn_if_unaligned(const KvCacheView& kv, DType model) {
  const KvCacheDType stored = resolve_kv_dtype(kv.dtype, model);
  const int64_t k_row = kv_bytes_per_head_vector(stored, model, kv.head_size);
  const int64_t v_row = kv_bytes_per_head_vector(stored, model, kv.head_size_v);
  auto off = [](int64_t x) { return x % 64 != 0; };
  auto off_ptr = [&](const void* p) { return off(int64_t(reinterpret_cast<uintptr_t>(p))); };
  const bool k_off =
      off_ptr(kv.k) || off(kv.stride_token) || off(kv.stride_head) || off(kv.stride_block);
  const bool v_off = kv.v && (off_ptr(kv.v) || off(kv.v_stride_token) || off(kv.v_stride_head) ||
                              off(kv.v_stride_block));
  if ((k_off && !off(k_row)) || (v_off && !off(v_row)))
    warn_once(
        "cpu_flash_unaligned_cache",
        fmt::format("CPU_FLASH: the KV cache is not 64-byte aligned (k at {} and v at {} "
                    "mod 64; K strides token/head/block {}/{}/{} bytes): each row then "
                    "spans one more cache line and decode runs up to ~40% slower; allocate "
                    "the cache and its strides in multiples of 64 bytes",
                    reinterpret_cast<uintptr_t>(kv.k) % 64, reinterpret_cast<uintptr_t>(kv.v) % 64,
                    kv.stride_token, kv.stride_head, kv.stride_block));
}

int default_threads() {
  if (const char* e = std::getenv("ATTNKIT_NUM_THREADS")) {
    const int n = std::atoi(e);
    if (n > 0) return n;
  }
#if defined(__linux__)
  // CPUs this process may run on (taskset, cgroups' cpusets), not every CPU of the machine.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

// A batch's PrefixLM offsets and ranges as one array (empty without ranges): run() must see
// the planned ones, since the work items' key spans follow them.
std::vector<int32_t> mm_prefix_copy(const AttentionBatch& b) {
  if (!b.mm_prefix_offsets || b.num_seqs <= 0) return {};
  std::vector<int32_t> v(b.mm_prefix_offsets, b.mm_prefix_offsets + b.num_seqs + 1);
  v.insert(v.end(), b.mm_prefix_ranges, b.mm_prefix_ranges + 2 * v.back());
  return v;
}
// Whether `b` has the ranges mm_prefix_copy kept (compared in place: run() allocates nothing).
bool same_mm_prefix(const std::vector<int32_t>& kept, const AttentionBatch& b) {
  if (!b.mm_prefix_offsets || b.num_seqs <= 0) return kept.empty();
  const size_t n_off = size_t(b.num_seqs) + 1;
  return kept.size() == n_off + 2 * size_t(b.mm_prefix_offsets[b.num_seqs]) &&
         std::equal(kept.begin(), kept.begin() + n_off, b.mm_prefix_offsets) &&
         std::equal(kept.begin() + n_off, kept.end(), b.mm_prefix_ranges);
}

// ATTNKIT_CPU_ISA=scalar|avx2|avx512|avx512_bf16|amx_bf16 forces a variant (testing, comparisons).
std::optional<cpu_flash::Isa> isa_from_env() {
  const char* e = std::getenv("ATTNKIT_CPU_ISA");
  if (!e || !*e) return std::nullopt;
  for (auto i : cpu_flash::kIsas)
    if (cpu_flash::to_string(i) == e) return i;
  throw InvalidArgument(
      fmt::format("ATTNKIT_CPU_ISA={} is not a CPU_FLASH variant (expected scalar, avx2, avx512, "
                  "avx512_bf16, amx_bf16)",
                  e));
}

CpuFlashOptions resolve(CpuFlashOptions o) {
  if (!o.isa) o.isa = isa_from_env();
  return o;
}

class CpuFlashBackend final : public AttentionBackend {
 public:
  explicit CpuFlashBackend(const CpuFlashOptions& opt) : CpuFlashBackend(resolve(opt), 0) {}
  CpuFlashBackend(const CpuFlashOptions& o, int)
      : kernels_(&cpu_flash::kernels_for(o.isa.value_or(cpu_flash::detect_isa()))),
        pool_(cpu_flash::shared_thread_pool(o.num_threads > 0 ? o.num_threads : default_threads())),
        bf16_dots_(kernels_->bf16_dot && (o.bf16_dots ? *o.bf16_dots : cpu_flash::bf16_dots_pay())),
        lockstep_max_rows_(!o.lockstep_heads   ? cpu_flash::lockstep_max_head_rows(pool_->size())
                           : *o.lockstep_heads ? cpu_flash::kLockstepHeadRows
                                               : 0) {
    if (o.isa && !cpu_flash::isa_supported(*o.isa))
      throw Unsupported(fmt::format("CPU_FLASH: ISA variant {} is not supported by this CPU",
                                    cpu_flash::to_string(*o.isa)));
    scratch_.resize(size_t(pool_->size()));
  }

  std::string_view name() const override { return "CPU_FLASH"; }
  const Capabilities& capabilities() const override { return cpu_flash_capabilities(); }
  size_t workspace_bytes() const override {
    return size_t(partial_rows_) * size_t(planned_.head_size_v + 2) * sizeof(float);
  }

  void plan(const AttentionBatch& hb, const AttentionLayerParams& L) override {
    backend_checks::check_layer("CPU_FLASH", L);
    check_head_sizes(L);
    if (hb.num_seqs > 0 && (!hb.cu_seqlens_q || !hb.seqused_k))
      fail("plan: cu_seqlens_q and seqused_k must not be null when num_seqs > 0");
    planned_ = L;
    planned_seqs_ = hb.num_seqs;
    // The work items carry these lengths: run() must see exactly the planned batch.
    planned_cu_.assign(hb.cu_seqlens_q, hb.cu_seqlens_q + (hb.num_seqs > 0 ? hb.num_seqs + 1 : 0));
    planned_used_.assign(hb.seqused_k, hb.seqused_k + std::max(hb.num_seqs, 0));
    backend_checks::check_mm_prefix_ranges("CPU_FLASH plan", hb);
    planned_mm_ = mm_prefix_copy(hb);
    items_.clear();
    merges_.clear();
    partial_rows_ = 0;
    const int g = L.num_heads / L.num_kv_heads;
    const bool bf16_products = kernels_->isa == cpu_flash::Isa::kAmxBf16 || bf16_dots_;
    const int tq = std::max(1, cpu_flash::rows_target(L.dtype, bf16_products) / g);
    int max_rows = 1;
    struct Base {
      WorkItem w;
      int lo, hi;
    };
    std::vector<Base> base;
    // One-head items of the batch: lockstep_heads groups KV heads only while the threads keep
    // about four items each (as the splits below aim for).
    int64_t single_items = 0;
    for (int s = 0; s < hb.num_seqs; ++s)
      single_items +=
          int64_t((hb.cu_seqlens_q[s + 1] - hb.cu_seqlens_q[s] + tq - 1) / tq) * L.num_kv_heads;
    for (int s = 0; s < hb.num_seqs; ++s) {
      const int sq = hb.cu_seqlens_q[s + 1] - hb.cu_seqlens_q[s], sk = hb.seqused_k[s];
      const cpu_flash::MmRanges mm = cpu_flash::mm_ranges(hb, s);
      for (int t0 = 0; t0 < sq; t0 += tq) {
        const int t1 = std::min(sq, t0 + tq);
        // Visible keys of the block: lo grows and hi grows with the query position.
        const auto first = cpu_flash::row_range(L, mm, t0, sq, sk);
        const auto last = cpu_flash::row_range(L, mm, t1 - 1, sq, sk);
        const int per_head = (t1 - t0) * g;
        const int heads = cpu_flash::lockstep_heads(per_head, single_items, int(pool_->size()),
                                                    L.num_kv_heads, lockstep_max_rows_);
        for (int kh = 0; kh < L.num_kv_heads; kh += heads) {
          WorkItem w{s, kh, t0, t1, 0, sk, -1, std::min(heads, L.num_kv_heads - kh)};
          base.push_back({w, first.lo, last.hi});
          max_rows = std::max(max_rows, per_head * w.heads);
        }
      }
    }
    // Split key ranges so that no piece costs more than a quarter of a thread's share of the
    // batch (cost = query rows x visible keys): few items split until every thread has about
    // four, and in a ragged batch a long sequence's items split while the short ones stay whole
    // (dynamic scheduling cannot balance an item longer than a thread's share).
    auto base_cost = [&](const Base& b) {
      return int64_t(b.w.t1 - b.w.t0) * b.w.heads * int64_t(std::max(1, b.hi - b.lo + 1));
    };
    int64_t total = 0;
    for (const Base& b : base) total += base_cost(b);
    const int64_t quarters = 4 * int64_t(pool_->size());
    for (const Base& b : base) {
      const int keys = b.hi - b.lo + 1;
      const int64_t want = (base_cost(b) * quarters + total - 1) / std::max<int64_t>(total, 1);
      const int splits = int(std::min<int64_t>({want, keys / cpu_flash::kSplitMinKeys, 32}));
      if (splits < 2) {
        items_.push_back(b.w);
        continue;
      }
      const int rows = (b.w.t1 - b.w.t0) * g * b.w.heads;
      const int chunk = (keys + splits - 1) / splits / cpu_flash::kKeyTile * cpu_flash::kKeyTile +
                        cpu_flash::kKeyTile;
      Merge m{b.w, partial_rows_, 0};
      for (int k0 = b.lo; k0 <= b.hi; k0 += chunk) {
        WorkItem w = b.w;
        w.k_begin = k0;
        w.k_end = std::min(b.hi + 1, k0 + chunk);
        w.partial = partial_rows_;
        partial_rows_ += rows;
        items_.push_back(w);
        ++m.splits;
      }
      merges_.push_back(m);
    }
    // Largest first, so dynamic scheduling ends with the small ones.
    auto cost = [&](const WorkItem& w) {
      return int64_t(w.t1 - w.t0) * w.heads * int64_t(std::max(1, w.k_end - w.k_begin));
    };
    std::stable_sort(items_.begin(), items_.end(),
                     [&](const WorkItem& a, const WorkItem& b) { return cost(a) > cost(b); });
    // Rows rounded up to 16: the AMX path computes whole 16-row tiles.
    const size_t floats =
        cpu_flash::ScratchLayout((max_rows + 15) / 16 * 16, L.head_size, L.head_size_v).total;
    for (Scratch& s : scratch_)
      if (s.size() < floats) s.assign_zeros(floats);
  }

  void run(const AttentionArgs& a, void* /*stream*/) override {
    backend_checks::check_attention_args("CPU_FLASH", a);
    check_head_sizes(a.layer);
    const AttentionLayerParams& L = a.layer;
    if (a.batch.num_seqs != planned_seqs_ || L.num_heads != planned_.num_heads ||
        L.num_kv_heads != planned_.num_kv_heads || L.head_size != planned_.head_size ||
        L.head_size_v != planned_.head_size_v || L.causal != planned_.causal ||
        L.window_left != planned_.window_left || L.window_right != planned_.window_right ||
        L.attention_chunk_size != planned_.attention_chunk_size ||
        !std::equal(planned_cu_.begin(), planned_cu_.end(), a.batch.cu_seqlens_q) ||
        !std::equal(planned_used_.begin(), planned_used_.end(), a.batch.seqused_k) ||
        !same_mm_prefix(planned_mm_, a.batch))
      fail("run() got a batch or layer that differs from the last plan(); call plan() first");
    if (partial_rows_ > 0 && !a.workspace)
      fail(fmt::format("workspace must hold {} bytes (split-KV partials)", workspace_bytes()));
    warn_if_unaligned(a.kv, L.dtype);
    // bf16 queries over bf16 or fp8 storage (fp8 converts exactly to bf16) take the bf16 path.
    const bool resolved_bf16 =
        L.dtype == DType::kBFloat16 &&
        (a.kv.dtype == KvCacheDType::kBFloat16 || a.kv.dtype == KvCacheDType::kFp8E4M3 ||
         a.kv.dtype == KvCacheDType::kFp8E5M2);
    const bool use_bf16 = kernels_->bf16_dot && resolved_bf16;
    float* partials = static_cast<float*>(a.workspace);
    pool_->parallel_for(int(items_.size()), [&](int i, int th) {
      kernels_->run_item(a, items_[size_t(i)], scratch_[size_t(th)].data(), partials, use_bf16,
                         bf16_dots_);
    });
    if (!merges_.empty())
      pool_->parallel_for(int(merges_.size()),
                          [&](int i, int) { merge(a, merges_[size_t(i)], partials); });
  }

  void write_kv(const KvWriteArgs& args, void* /*stream*/) override {
    backend_checks::check_write_args("CPU_FLASH", args);
    write_kv_cpu(args);
  }

 private:
  struct Merge {
    WorkItem w;
    int64_t first;
    int splits;
  };

  // Combines the splits of one item: rescale each partial to the common max, sum, normalize.
  void merge(const AttentionArgs& a, const Merge& m, float* partials) const {
    const AttentionLayerParams& L = a.layer;
    const int g = L.num_heads / L.num_kv_heads, dv = L.head_size_v;
    const int rows = cpu_flash::item_rows(a, m.w);
    const int q0 = a.batch.cu_seqlens_q[m.w.seq];
    const int64_t stride = int64_t(rows) * (dv + 2);
    for (int r = 0; r < rows; ++r) {
      float* first = partials + (m.first + r) * int64_t(dv + 2);
      float mx = cpu_flash::kNegInf;
      for (int s = 0; s < m.splits; ++s) mx = std::max(mx, first[s * stride]);
      float l = 0.f;
      if (mx != cpu_flash::kNegInf) {
        const float w0 = first[0] == cpu_flash::kNegInf ? 0.f : std::exp(first[0] - mx);
        l = first[1] * w0;
        for (int i = 0; i < dv; ++i) first[2 + i] *= w0;
        for (int s = 1; s < m.splits; ++s) {
          const float* p = first + s * stride;
          if (p[0] == cpu_flash::kNegInf) continue;
          const float w = std::exp(p[0] - mx);
          l += p[1] * w;
          for (int i = 0; i < dv; ++i) first[2 + i] += p[2 + i] * w;
        }
      }
      const auto [t, h] = cpu_flash::item_row(a, m.w, r);
      cpu_flash::finalize_row(
          a, q0 + t, h, first + 2, mx, l,
          cpu_flash::kv_scale(a.kv, a.kv.v ? a.kv.v_scale : a.kv.k_scale, h / g));
    }
  }

  const cpu_flash::KernelFns* kernels_;
  std::shared_ptr<cpu_flash::ThreadPool> pool_;
  bool bf16_dots_;         // bf16 items above decode size on vdpbf16ps (CpuFlashOptions::bf16_dots)
  int lockstep_max_rows_;  // CpuFlashOptions::lockstep_heads: heads of up to this many rows
  // One worker's scratch (cpu_flash::ScratchLayout), 64-byte aligned: the layout keeps its parts
  // at 64-byte offsets from the base, so that the kernels' 64-byte vector and AMX tile accesses
  // touch whole cache lines. A std::vector<float> base sat 0-48 bytes off a line, differently per
  // backend; 16-48 bytes off cost AMX items 14-25% in L2 and bf16 prefill 22-46% (bench/NOTES.md,
  // session 56).
  class Scratch {
   public:
    float* data() const { return p_.get(); }
    size_t size() const { return n_; }
    void assign_zeros(size_t n) {
      p_.reset(static_cast<float*>(::operator new(n * sizeof(float), std::align_val_t(64))));
      n_ = n;
      std::fill_n(p_.get(), n, 0.f);
    }

   private:
    struct Free {
      void operator()(float* p) const { ::operator delete(p, std::align_val_t(64)); }
    };
    std::unique_ptr<float, Free> p_;
    size_t n_ = 0;
  };
  std::vector<Scratch> scratch_;
  std::vector<WorkItem> items_;
  std::vector<Merge> merges_;
  int64_t partial_rows_ = 0;
  AttentionLayerParams planned_;
  int planned_seqs_ = -1;
  std::vector<int32_t> planned_cu_, planned_used_, planned_mm_;
};

}  // namespace

std::unique_ptr<AttentionBackend> make_cpu_flash_backend() {
  return make_cpu_flash_backend(CpuFlashOptions{});
}
std::unique_ptr<AttentionBackend> make_cpu_flash_backend(const CpuFlashOptions& options) {
  return std::make_unique<CpuFlashBackend>(options);
}

}  // namespace attnkit
