// `attnkit bench --device cuda`: CUDA_FLASH prefill TFLOP/s and paged-decode GB/s, one JSON object
// per line, with the device's read and copy ceilings measured in the same run. Protocol
// (DESIGN.md §5): CUDA events, 3 warm-ups, median of >= 20 timed runs, a 256 MiB buffer written
// between runs (no L2 hits), random inputs, and a sampled fp64 check of each row before it counts.
// Decode rows are also timed after a clean (read) eviction, launched and as a CUDA graph replay,
// and per layer in a graph of several layers' calls over their own caches (`ms_layer_loop`).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnkit/error.hpp"
#include "attnkit/numeric.hpp"
#include "bench.hpp"

#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "backends/cuda_flash/cuda_flash_backend.hpp"
#include "backends/cuda_flash/launch.hpp"
#include "backends/cuda_flash/manifest.hpp"
#include "backends/cuda_flash/tiles.hpp"
#include "backends/cuda_mla/cuda_mla_backend.hpp"
#include "backends/cuda_mla/mla_tiles.hpp"
#endif

namespace attnkit::cli {

#if !defined(ATTNKIT_CUDA_FLASH_KERNELS)

int run_cuda_bench(const BenchOptions&) {
  throw Unsupported(
      "attnkit bench --device cuda: this build has no CUDA kernels (configure with the cuda "
      "preset: cmake --preset cuda)");
}

#else

namespace {

using nlohmann::json;

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(fmt::format("bench: {}: {}", what, cudaGetErrorString(e)));
}

struct Buf {
  void* p = nullptr;
  size_t n = 0;
  explicit Buf(size_t bytes = 0) : n(bytes) {
    if (bytes) ck(cudaMalloc(&p, bytes), "cudaMalloc");
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() {
    if (p) cudaFree(p);
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

template <typename T>
void put(Buf& b, const std::vector<T>& v) {
  ck(cudaMemcpy(b.p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
}

// CTAs of the read probe (a few per SM of an H100/H200), one sink word each.
constexpr int kProbeCtas = 132 * 8;

// How a timed run starts: `kWrite` after a 256 MiB memset (what triton's do_bench and
// cudnn-frontend do: nothing of the inputs stays in L2, but L2 is left full of dirty lines that
// are written back during the timed call, ~8 us at every decode shape on the H200); `kClean` after
// a 256 MiB read with normal loads (L2 then holds clean lines of another buffer: a cold call with
// no write-back). `graph` replays a captured CUDA graph of the call instead of launching it.
enum class L2 { kWrite, kClean };

class Timer {
 public:
  Timer() : flush_(256u << 20), sink_(kProbeCtas * 4) {
    ck(cudaStreamCreate(&stream_), "stream");  // blocking: ordered after the default stream's fills
    ck(cudaEventCreate(&a_), "event");
    ck(cudaEventCreate(&b_), "event");
    ck(cudaMemset(flush_.p, 0x3c, flush_.n), "flush init");
  }
  ~Timer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
    cudaStreamDestroy(stream_);
  }
  // Median milliseconds of `reps` runs of fn(stream), each after evicting L2 (`l2`).
  double median_ms(const std::function<void(cudaStream_t)>& fn, int reps, L2 l2 = L2::kWrite,
                   bool graph = false) {
    cudaGraphExec_t exec = nullptr;
    if (graph) {
      cudaGraph_t g = nullptr;
      ck(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "begin capture");
      fn(stream_);
      ck(cudaStreamEndCapture(stream_, &g), "end capture");
      ck(cudaGraphInstantiate(&exec, g, 0), "instantiate");
      ck(cudaGraphDestroy(g), "graph destroy");
    }
    auto call = [&] {
      if (exec)
        ck(cudaGraphLaunch(exec, stream_), "graph launch");
      else
        fn(stream_);
    };
    for (int i = 0; i < 3; ++i) call();
    ck(cudaStreamSynchronize(stream_), "warm-up");
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      if (l2 == L2::kWrite)
        ck(cudaMemsetAsync(flush_.p, i & 0xff, flush_.n, stream_), "flush");
      else
        cuda_flash::launch_read_probe(flush_.p, flush_.n, sink_.as<uint32_t>(), kProbeCtas, false,
                                      stream_);
      ck(cudaEventRecord(a_, stream_), "record");
      call();
      ck(cudaEventRecord(b_, stream_), "record");
      ck(cudaEventSynchronize(b_), "sync");
      float ms = 0;
      ck(cudaEventElapsedTime(&ms, a_, b_), "elapsed");
      t.push_back(ms);
    }
    ck(cudaGetLastError(), "timed runs");
    if (exec) ck(cudaGraphExecDestroy(exec), "graph exec destroy");
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

 private:
  Buf flush_, sink_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t a_, b_;
};

float bf16_at(const std::vector<uint16_t>& v, size_t i) { return bf16_bits_to_float(v[i]); }

// One attention problem over a paged cache: bf16 activations, bf16 or fp8 e4m3 KV. MLA shapes
// (CUDA_MLA) read one latent cache: head 576 (hkv 1), V = the first 512 elements of each row.
// Encoder shapes read the step's own K/V rows, contiguous [tokens, hkv, head] (the cu_seqlens_k
// form, docs/semantics.md §2), as an encoder layer gives them.
struct Shape {
  std::string kind;  // prefill | encoder | decode | mla_decode | mixed | mla_mixed
  int batch, hq, hkv, head, seq_q, seq_k, page;
  bool causal;
  KvCacheDType kv;
  std::vector<int> lens = {};  // a ragged decode batch: each sequence's keys (seq_k: the longest)
  std::string lens_text = {};  // ... as the grid gave it ("1x65536+63x1024"), the rows' batch_lens
  int image = 0;               // prefill: keys [0, image) of each sequence are one PrefixLM range
  int wl = -1, wr = -1;        // prefill, encoder: window_left / window_right as kernels get them
  int chunk = 0;               // decode: attention_chunk_size (a row reads its chunk's keys only)
  // prefill: V's head size where it is not `head` (192/128); the cache packs V rows at their own
  // dv elements, as a model's cache does
  int dv = 0;
  // mixed (a chunked-prefill step): each sequence's query tokens, decodes first (seq_q: the most)
  std::vector<int> qlens = {};
  int image_of(int seq) const { return std::min(image, len(seq)); }
  int q_of(int seq) const { return qlens.empty() ? seq_q : qlens[seq]; }
  std::vector<int32_t> cu_seqlens_q() const {
    std::vector<int32_t> cu(size_t(batch) + 1, 0);
    for (int i = 0; i < batch; ++i) cu[size_t(i) + 1] = cu[size_t(i)] + q_of(i);
    return cu;
  }
  bool mla() const { return kind.starts_with("mla_"); }
  bool mixed() const { return kind == "mixed" || kind == "mla_mixed"; }
  bool contiguous() const { return kind == "encoder"; }
  int head_v() const { return mla() ? 512 : dv ? dv : head; }
  // elements of a V row in the cache: head_v, packed; MLA's V is the leading 512 of each latent
  // (K) row, so its rows are K's
  int v_row() const { return mla() ? head : head_v(); }
  int len(int seq) const { return lens.empty() ? seq_k : lens[seq]; }
  double total_keys() const {
    double n = 0;
    for (int i = 0; i < batch; ++i) n += len(i);
    return n;
  }
  // The first key a sequence's rows read: its first row's chunk's (0 without a chunk).
  int first_key(int seq) const {
    const int p = std::max(0, len(seq) - q_of(seq));
    return chunk > 0 ? int(chunk_first_key(p, chunk)) : 0;
  }
  // K/V bytes a step reads (the latent once for MLA)
  double kv_bytes() const {
    const int elem = kv == KvCacheDType::kFp8E4M3 ? 1 : 2;
    double keys = 0;
    for (int i = 0; i < batch; ++i) keys += len(i) - first_key(i);
    return keys * hkv * (mla() ? head : double(head + head_v())) * elem;
  }
};

struct Arena {  // reused device buffers, grown on demand
  Buf q, out, lse, k, v, ws, cu, used, bt, scale, mm_off, mm_rng;
  void need(Buf& b, size_t bytes) {
    if (b.n < bytes) {
      b.~Buf();
      new (&b) Buf(bytes);
    }
  }
};

int kind_of(KvCacheDType d) { return d == KvCacheDType::kFp8E4M3 ? 2 : 1; }

// fp64 attention of sampled rows (first and last sequence, first and last query row, first and
// last head) from device copies; returns the largest relative L2 error of a row.
double sampled_check(const Shape& s, Arena& A, const std::vector<int32_t>& bt, int bt_stride,
                     int elem, float scale, float kscale, float vscale) {
  double worst = 0;
  const int D = s.head, Dv = s.head_v();
  const std::vector<int32_t> cu = s.cu_seqlens_q();
  for (int seq : {0, s.batch - 1})
    for (int qi : {0, s.q_of(seq) - 1})
      for (int h : {0, s.hq - 1}) {
        const int g = h / (s.hq / s.hkv);
        const int64_t tok = cu[size_t(seq)] + qi;
        std::vector<uint16_t> q(D), o(Dv);
        ck(cudaMemcpy(q.data(), A.q.as<uint16_t>() + (tok * s.hq + h) * D, D * 2,
                      cudaMemcpyDeviceToHost),
           "q row");
        ck(cudaMemcpy(o.data(), A.out.as<uint16_t>() + (tok * s.hq + h) * Dv, Dv * 2,
                      cudaMemcpyDeviceToHost),
           "out row");
        const int pos = s.len(seq) - s.q_of(seq) + qi;
        // causal: keys up to the row's own, or the whole image for a row inside it
        const int nk =
            s.causal ? std::max(pos + 1, pos < s.image_of(seq) ? s.image_of(seq) : 0) : s.len(seq);
        const int pages = s.contiguous() ? 0 : (nk + s.page - 1) / s.page;
        const int Dr = s.v_row();
        const int64_t head_bytes = int64_t(s.page) * D * elem,
                      head_bytes_v = int64_t(s.page) * Dr * elem;
        std::vector<uint8_t> kb(size_t(pages) * head_bytes), vb(size_t(pages) * head_bytes_v);
        // elements from one key's row of this head to the next, in K and in V
        int64_t row_of_key = D, row_of_v = Dr;
        if (s.contiguous()) {  // the sequence's rows, every head
          row_of_key = int64_t(s.hkv) * D;
          row_of_v = int64_t(s.hkv) * Dr;
          const int64_t kbytes = nk * row_of_key * elem, vbytes = nk * row_of_v * elem;
          kb.resize(size_t(kbytes));
          vb.resize(size_t(vbytes));
          ck(cudaMemcpy(kb.data(), A.k.as<uint8_t>() + int64_t(seq) * s.seq_k * row_of_key * elem,
                        kbytes, cudaMemcpyDeviceToHost),
             "k rows");
          ck(cudaMemcpy(vb.data(), A.v.as<uint8_t>() + int64_t(seq) * s.seq_k * row_of_v * elem,
                        vbytes, cudaMemcpyDeviceToHost),
             "v rows");
        }
        for (int p = 0; p < pages; ++p) {
          const int64_t blk = bt[size_t(seq) * bt_stride + p];
          ck(cudaMemcpy(kb.data() + p * head_bytes,
                        A.k.as<uint8_t>() + (blk * s.hkv + g) * head_bytes, head_bytes,
                        cudaMemcpyDeviceToHost),
             "k page");
          if (!s.mla())
            ck(cudaMemcpy(vb.data() + p * head_bytes_v,
                          A.v.as<uint8_t>() + (blk * s.hkv + g) * head_bytes_v, head_bytes_v,
                          cudaMemcpyDeviceToHost),
               "v page");
        }
        if (s.mla()) vb = kb;  // V = the leading Dv elements of each latent row
        const int64_t head_at = s.contiguous() ? int64_t(g) * D : 0;
        const int64_t head_at_v = s.contiguous() ? int64_t(g) * Dr : 0;
        auto val = [&](const std::vector<uint8_t>& b, int j, int d, bool v) -> double {
          const size_t i = size_t(v ? j * row_of_v + head_at_v + d : j * row_of_key + head_at + d);
          if (elem == 1) return fp8_e4m3_to_float(b[i]);
          uint16_t x;
          std::memcpy(&x, &b[i * 2], 2);
          return bf16_bits_to_float(x);
        };
        // A window: keys [pos - wl, pos + wr] only; a chunk: the row's chunk's keys only.
        int j0 = s.wl >= 0 ? std::max(0, pos - s.wl) : 0;
        if (s.chunk > 0) j0 = std::max(j0, int(chunk_first_key(pos, s.chunk)));
        const int j1 = s.wr >= 0 ? std::min(nk, pos + s.wr + 1) : nk;
        std::vector<double> logit(nk);
        double mx = -INFINITY;
        for (int j = j0; j < j1; ++j) {
          double acc = 0;
          for (int d = 0; d < D; ++d) acc += double(bf16_at(q, d)) * val(kb, j, d, false);
          logit[j] = acc * scale * kscale;
          mx = std::max(mx, logit[j]);
        }
        double z = 0;
        std::vector<double> ref(Dv, 0.0);
        for (int j = j0; j < j1; ++j) {
          const double w = std::exp(logit[j] - mx);
          z += w;
          for (int d = 0; d < Dv; ++d) ref[d] += w * val(vb, j, d, true);
        }
        double num = 0, den = 0;
        for (int d = 0; d < Dv; ++d) {
          const double r = ref[d] / z * vscale, gval = bf16_at(o, d);
          if (!std::isfinite(gval)) return INFINITY;
          num += (gval - r) * (gval - r);
          den += r * r;
        }
        worst = std::max(worst, std::sqrt(num / std::max(den, 1e-30)));
      }
  return worst;
}

// The kernel form a row ran (cuda_flash_planned_form): CUDA_MLA's wide or Hopper form;
// CUDA_FLASH's v3 Hopper prefill form, v2's decode form or v2's prefill forms.
std::string form_name(const Shape& s, int form) {
  if (s.mla()) return form == cuda_mla::kHopperForm ? "hopper" : "wide";
  return form == cuda_flash::kHopperPrefillForm ? "v3-hopper"
         : form == cuda_flash::kV2DecodeForm    ? "v2-decode"
                                                : "v2";
}

// Where a row's pages lie: its seed (inputs and block order), the order (shuffled or each
// sequence's blocks in turn) and the pool, `pool` times the blocks the batch reads, from whose
// first blocks (sequential) or random ones (shuffled) the block tables take theirs, as a serving
// cache holds more blocks than one step reads (K, V and the layer loop's layers lie a pool apart).
struct CacheLayout {
  uint64_t seed;
  bool sequential;
  double pool;
};

// `opt`: the backend's options as the command line set them.
json run_shape(const Shape& s, Arena& A, Timer& T, int reps, const CacheLayout& lay,
               const CudaFlashOptions& opt) {
  const uint64_t seed = lay.seed;
  const int D = s.head, Dv = s.head_v(), elem = s.kv == KvCacheDType::kFp8E4M3 ? 1 : 2;
  const std::vector<int32_t> cu = s.cu_seqlens_q();
  const int64_t tq = cu.back();
  const int pages_per_seq = (s.seq_k + s.page - 1) / s.page;  // the block table's row stride
  int64_t used_blocks = 0;
  for (int i = 0; i < s.batch; ++i) used_blocks += (s.len(i) + s.page - 1) / s.page;
  const int64_t blocks = int64_t(std::ceil(double(used_blocks) * lay.pool));  // the pool
  const int Dr = s.v_row();
  const int64_t head_bytes = int64_t(s.page) * D * elem, head_bytes_v = int64_t(s.page) * Dr * elem;
  const size_t cache_bytes = s.contiguous() ? size_t(s.total_keys()) * s.hkv * D * elem
                                            : size_t(blocks) * s.hkv * head_bytes;
  // V's cache (none for MLA's latent)
  const size_t v_cache_bytes = s.mla()          ? 0
                               : s.contiguous() ? size_t(s.total_keys()) * s.hkv * Dr * elem
                                                : size_t(blocks) * s.hkv * head_bytes_v;
  A.need(A.q, tq * s.hq * D * 2);
  A.need(A.out, tq * s.hq * Dv * 2);
  A.need(A.lse, tq * s.hq * 4);
  A.need(A.k, cache_bytes);
  if (!s.mla()) A.need(A.v, v_cache_bytes);
  void* st = nullptr;
  cuda_flash::launch_fill_random(A.q.p, tq * s.hq * D, 2, 1, seed, 1.f, st);
  cuda_flash::launch_fill_random(A.k.p, cache_bytes / elem, elem, kind_of(s.kv), seed + 1,
                                 elem == 1 ? 4.f : 1.f, st);
  if (!s.mla())
    cuda_flash::launch_fill_random(A.v.p, v_cache_bytes / elem, elem, kind_of(s.kv), seed + 2,
                                   elem == 1 ? 4.f : 1.f, st);
  std::vector<int32_t> used(s.batch);
  for (int i = 0; i < s.batch; ++i) used[i] = s.len(i);
  std::vector<int32_t> perm(blocks);
  std::iota(perm.begin(), perm.end(), 0);
  if (!lay.sequential)  // scattered pages, as a serving cache hands them out after a while
    std::shuffle(perm.begin(), perm.end(), std::mt19937(uint32_t(seed)));
  // Each sequence's pages from that list in turn; entries past its last page stay unused.
  std::vector<int32_t> bt(size_t(s.batch) * pages_per_seq, 0);
  for (int64_t i = 0, next = 0; i < s.batch; ++i)
    for (int j = 0; j < (s.len(int(i)) + s.page - 1) / s.page; ++j)
      bt[size_t(i) * pages_per_seq + j] = perm[next++];
  if (s.contiguous()) bt.assign(cu.begin(), cu.end() - 1);  // sequence i's rows start at cu[i]
  A.need(A.cu, cu.size() * 4);
  A.need(A.used, used.size() * 4);
  A.need(A.bt, bt.size() * 4);
  put(A.cu, cu);
  put(A.used, used);
  put(A.bt, bt);
  // MLA's latent has one scale, used for K and V.
  const float kscale = elem == 1 ? 0.5f : 1.f, vscale = elem == 1 && !s.mla() ? 0.25f : kscale;
  if (elem == 1) {
    A.need(A.scale, 8);
    put(A.scale, std::vector<float>{kscale, vscale});
  }

  // The shape's backend (CUDA_MLA for the latent cache) under options o.
  const auto make = [&s](const CudaFlashOptions& o) {
    return s.mla() ? make_cuda_mla_backend(o) : make_cuda_flash_backend(o);
  };
  auto be = make(opt);
  AttentionBatch hb;
  hb.num_seqs = s.batch;
  hb.total_q = int(tq);
  hb.max_seqlen_q = s.seq_q;
  hb.max_seqlen_k = s.seq_k;
  hb.cu_seqlens_q = cu.data();
  hb.seqused_k = used.data();
  hb.block_table = bt.data();
  hb.block_table_stride = s.contiguous() ? 1 : pages_per_seq;
  hb.earlier_rows_settled = true;       // the cache is written once, before every call
  std::vector<int32_t> mm_off, mm_rng;  // the image ranges (--prefill-image)
  if (s.image > 0) {
    for (int i = 0; i < s.batch; ++i) {
      mm_off.push_back(int32_t(mm_rng.size() / 2));
      mm_rng.insert(mm_rng.end(), {0, s.image_of(i)});
    }
    mm_off.push_back(int32_t(mm_rng.size() / 2));
    A.need(A.mm_off, mm_off.size() * 4);
    A.need(A.mm_rng, mm_rng.size() * 4);
    put(A.mm_off, mm_off);
    put(A.mm_rng, mm_rng);
    hb.mm_prefix_offsets = mm_off.data();
    hb.mm_prefix_ranges = mm_rng.data();
  }
  AttentionLayerParams L;
  L.num_heads = s.hq;
  L.num_kv_heads = s.hkv;
  L.head_size = D;
  L.head_size_v = Dv;
  L.dtype = DType::kBFloat16;
  L.scale = 1.f / std::sqrt(float(s.mla() ? 192 : D));  // MLA: nope + rope of the prefill head
  L.causal = s.causal;
  L.window_left = s.wl;
  L.window_right = s.wr;
  L.attention_chunk_size = s.chunk;
  const auto p0 = std::chrono::steady_clock::now();
  be->plan(hb, L);
  const double plan_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - p0).count();
  A.need(A.ws, be->workspace_bytes());

  AttentionArgs a;
  a.q = A.q.p;
  a.q_stride_token = int64_t(s.hq) * D;
  a.q_stride_head = D;
  a.out = A.out.p;
  a.out_stride_token = int64_t(s.hq) * Dv;
  a.out_stride_head = Dv;
  a.lse = A.lse.as<float>();
  KvCacheView& kv = a.kv;
  if (s.contiguous()) {
    kv = contiguous_kv_view(s.kv, DType::kBFloat16, int(s.total_keys()), s.hkv, D, Dv, s.seq_k);
  } else {
    kv.dtype = s.kv;
    kv.num_blocks = int(blocks);
    kv.block_size = s.page;
    kv.num_kv_heads = s.hkv;
    kv.head_size = D;
    kv.head_size_v = Dv;
    kv.stride_token = int64_t(D) * elem;
    kv.stride_head = head_bytes;
    kv.stride_block = head_bytes * s.hkv;
    kv.v_stride_token = int64_t(Dr) * elem;
    kv.v_stride_head = head_bytes_v;
    kv.v_stride_block = head_bytes_v * s.hkv;
  }
  kv.k = A.k.p;
  if (!s.mla()) kv.v = A.v.p;
  if (elem == 1) {
    kv.scale_granularity = ScaleGranularity::kPerTensor;
    kv.k_scale = A.scale.as<float>();
    if (!s.mla()) kv.v_scale = A.scale.as<float>() + 1;
  }
  a.batch = hb;
  a.batch.cu_seqlens_q = A.cu.as<int32_t>();
  a.batch.seqused_k = A.used.as<int32_t>();
  a.batch.block_table = A.bt.as<int32_t>();
  if (s.image > 0) {
    a.batch.mm_prefix_offsets = A.mm_off.as<int32_t>();
    a.batch.mm_prefix_ranges = A.mm_rng.as<int32_t>();
  }
  a.layer = L;
  a.workspace = A.ws.p;

  // Correctness first: poison, run once, check sampled rows in fp64.
  const auto checked = [&](const std::function<void(cudaStream_t)>& fn) {
    ck(cudaMemset(A.out.p, 0xff, tq * s.hq * Dv * 2), "poison");
    fn(nullptr);
    ck(cudaDeviceSynchronize(), "check run");
    return sampled_check(s, A, bt, pages_per_seq, elem, L.scale, kscale, vscale);
  };
  const auto call = [&](cudaStream_t st) { be->run(a, st); };
  const double err = checked(call);
  const double ms = T.median_ms(call, reps);

  json row = {{"impl", "attnkit"},
              {"kind", s.kind},
              {"batch", s.batch},
              {"heads_q", s.hq},
              {"heads_kv", s.hkv},
              {"head_dim", D},
              {"head_dim_v", Dv},
              {"seq_q", s.seq_q},
              {"seq_k", s.seq_k},
              {"causal", s.causal},
              {"page", s.contiguous() ? 0 : s.page},
              {"kv_dtype", std::string(to_string(s.kv))},
              {"splits", cuda_flash_planned_splits(*be)},
              {"split_chunk_keys", cuda_flash_planned_split_chunk(*be)},
              {"form", form_name(s, cuda_flash_planned_form(*be))},
              {"decode_ctas_per_sm", cuda_flash_decode_ctas_per_sm(*be)},
              {"early_copies", cuda_flash_decode_early_copies(*be)},
              {"ms", ms},
              {"plan_us", plan_us},
              {"check_rel_err", err},
              {"ok", err < 2e-2}};
  if (s.mixed()) {
    // A chunked-prefill step: the decodes (the first sequences) and the prefill chunks after them,
    // in one call (above); as two calls on the same buffers, one per part, each planned on its
    // own (the sub-batch's offsets rebased to 0): what the step costs when the parts run the
    // forms a batch of only that part would; and in one call planned as one part (one_part, the
    // plan before parts).
    int nd = 0;
    while (nd < s.batch && s.q_of(nd) == 1) ++nd;
    struct Part {
      std::unique_ptr<AttentionBackend> be;
      AttentionArgs a;
      std::vector<int32_t> cu;
      std::unique_ptr<Buf> cu_dev, ws;
    };
    auto part = [&](int first, int n) {
      Part pt{make(opt), a, {}, nullptr, nullptr};
      const int32_t t0 = cu[size_t(first)];
      for (int i = first; i <= first + n; ++i) pt.cu.push_back(cu[size_t(i)] - t0);
      pt.cu_dev = std::make_unique<Buf>(pt.cu.size() * 4);
      put(*pt.cu_dev, pt.cu);
      AttentionBatch ph = hb;
      ph.num_seqs = n;
      ph.total_q = pt.cu.back();
      ph.max_seqlen_q = 0;
      for (int i = 0; i < n; ++i)
        ph.max_seqlen_q = std::max(ph.max_seqlen_q, pt.cu[size_t(i) + 1] - pt.cu[size_t(i)]);
      ph.cu_seqlens_q = pt.cu.data();
      ph.seqused_k = used.data() + first;
      ph.block_table = bt.data() + size_t(first) * pages_per_seq;
      pt.be->plan(ph, L);
      pt.ws = std::make_unique<Buf>(pt.be->workspace_bytes());
      pt.a.q = A.q.as<uint16_t>() + int64_t(t0) * s.hq * D;
      pt.a.out = A.out.as<uint16_t>() + int64_t(t0) * s.hq * Dv;
      pt.a.lse = A.lse.as<float>() + int64_t(t0) * s.hq;
      pt.a.batch.num_seqs = n;
      pt.a.batch.total_q = ph.total_q;
      pt.a.batch.max_seqlen_q = ph.max_seqlen_q;
      pt.a.batch.cu_seqlens_q = pt.cu_dev->as<int32_t>();
      pt.a.batch.seqused_k = A.used.as<int32_t>() + first;
      pt.a.batch.block_table = A.bt.as<int32_t>() + size_t(first) * pages_per_seq;
      pt.a.workspace = pt.ws->p;
      row[first == 0 ? "decode_part_splits" : "prefill_part_splits"] =
          cuda_flash_planned_splits(*pt.be);
      return pt;
    };
    Part dec = part(0, nd), pre = part(nd, s.batch - nd);
    // The whole batch in one call planned under other options: its backend, workspace, arguments.
    struct Variant {
      std::unique_ptr<AttentionBackend> be;
      std::unique_ptr<Buf> ws;
      AttentionArgs a;
      std::function<void(cudaStream_t)> call() const {
        return [this](cudaStream_t st) { be->run(a, st); };
      }
    };
    auto variant = [&](const CudaFlashOptions& o) {
      Variant v{make(o), nullptr, a};
      v.be->plan(hb, L);
      v.ws = std::make_unique<Buf>(v.be->workspace_bytes());
      v.a.workspace = v.ws->p;
      return v;
    };
    CudaFlashOptions one_opt = opt;
    one_opt.one_part = true;
    const Variant one = variant(one_opt);
    const double err_one = checked(one.call());
    const auto both = [&](cudaStream_t st) {
      dec.be->run(dec.a, st);
      pre.be->run(pre.a, st);
    };
    const double err_parts = checked(both);
    row["decodes"] = nd;
    row["parts"] = cuda_flash_planned_parts(*be);
    row["check_rel_err_parts"] = err_parts;
    row["check_rel_err_one_part"] = err_one;
    row["ok"] = err < 2e-2 && err_parts < 2e-2 && err_one < 2e-2;
    row["ms_clean_l2"] = T.median_ms(call, reps, L2::kClean);
    row["ms_two_calls"] = T.median_ms(both, reps);
    row["ms_two_calls_clean_l2"] = T.median_ms(both, reps, L2::kClean);
    row["ms_one_part"] = T.median_ms(one.call(), reps);
    row["ms_one_part_clean_l2"] = T.median_ms(one.call(), reps, L2::kClean);
    row["one_part_splits"] = cuda_flash_planned_splits(*one.be);
    // The same parts arranged the other way: in turn on one stream where the plan runs them
    // concurrently; run as parts (concurrently) where the plan keeps a small decode run in the
    // chunks' launch (part_min_decode_bytes).
    const bool two = cuda_flash_planned_parts(*be) == 2;
    CudaFlashOptions alt_opt = opt;
    if (two)
      alt_opt.concurrent_parts = false;
    else
      alt_opt.part_min_decode_bytes = 0;
    const Variant alt = variant(alt_opt);
    if (cuda_flash_planned_parts(*alt.be) == 2) {
      const std::string k = two ? "in_turn" : "parts_below_threshold";
      const double err_alt = checked(alt.call());
      row["check_rel_err_" + k] = err_alt;
      row["ok"] = row["ok"].get<bool>() && err_alt < 2e-2;
      row["ms_" + k] = T.median_ms(alt.call(), reps);
      row["ms_" + k + "_clean_l2"] = T.median_ms(alt.call(), reps, L2::kClean);
    }
    row["ms_decode_part"] = T.median_ms([&](cudaStream_t st) { dec.be->run(dec.a, st); }, reps);
    row["ms_prefill_part"] = T.median_ms([&](cudaStream_t st) { pre.be->run(pre.a, st); }, reps);
    row["form_decode_part"] = form_name(s, cuda_flash_planned_form(*dec.be));
    row["form_prefill_part"] = form_name(s, cuda_flash_planned_form(*pre.be));
    row["GBps"] = s.kv_bytes() / ms / 1e6;
    return row;
  }
  if (s.kind == "prefill" || s.contiguous()) {
    // 2 (D + Dv) per (query, key) pair and head: Q K^T and P V
    double flops = 2.0 * s.batch * s.hq * double(s.seq_q) * s.seq_k * (D + Dv) / (s.causal ? 2 : 1);
    if (s.wl >= 0 || s.wr >= 0) {  // the pairs a window lets through (seq_q == seq_k)
      double pairs = 0;
      for (int p = 0; p < s.seq_q; ++p)
        pairs += (s.causal    ? p
                  : s.wr >= 0 ? std::min(s.seq_k - 1, p + s.wr)
                              : s.seq_k - 1) -
                 (s.wl >= 0 ? std::max(0, p - s.wl) : 0) + 1;
      flops = 2.0 * s.batch * s.hq * pairs * (D + Dv);
      row["window_left"] = s.wl;
      row["window_right"] = s.wr;
    }
    if (s.image > 0) {
      row["image"] = s.image;
      // Under a causal mask the image's rows also see the image keys after their own.
      if (s.causal)
        for (int i = 0; i < s.batch; ++i)
          flops += 2.0 * s.hq * (D + Dv) * double(s.image_of(i)) * (s.image_of(i) - 1) / 2;
    }
    row["TFLOPs"] = flops / ms / 1e9;
  } else {
    // Decode also under the clean-L2 protocol, launched and replayed from a CUDA graph (what
    // serving engines do; one layer's split-KV kernel and combine).
    const double bytes = s.kv_bytes();
    if (s.chunk > 0) row["chunk"] = s.chunk;
    if (s.mla())  // Q.K^T over 576 and P.V over 512 per (head, key)
      row["TFLOPs"] = 2.0 * s.hq * s.total_keys() * (D + Dv) / ms / 1e9;
    const double clean = T.median_ms(call, reps, L2::kClean);
    const double graph = T.median_ms(call, reps, L2::kClean, true);
    row["GBps"] = bytes / ms / 1e6;
    row["ms_clean_l2"] = clean;
    row["GBps_clean_l2"] = bytes / clean / 1e6;
    row["ms_graph_clean_l2"] = graph;
    row["GBps_graph_clean_l2"] = bytes / graph / 1e6;
    // A model step: one graph of `layers` calls, each over its own layer's cache (same pages and
    // metadata, as one plan serves every layer of a step), so each call finds the L2 holding the
    // previous layers' clean lines (perf-anchors §7: input sets rotated, a layer loop replayed
    // from a graph). Per layer: launch and ramp overlap the previous call's tail.
    // 4 GiB of K/V read in all, 4 to 32 layers, within 80% of the free device memory (at least
    // 2). The count follows the pages the calls read, not the pool they lie in, so that rows of
    // different --pool run the same layers where memory allows.
    size_t free_bytes = 0, total_bytes = 0;
    ck(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const size_t layer_bytes = cache_bytes + v_cache_bytes;
    // the pool's share that the calls read (a paged cache: layer_bytes is a multiple of blocks)
    const size_t read_bytes = layer_bytes / size_t(blocks) * size_t(used_blocks);
    const int layers = int(std::min(std::clamp<size_t>((size_t(4) << 30) / read_bytes, 4, 32),
                                    free_bytes / 5 * 4 / layer_bytes));
    if (layers < 2) {
      row["layer_loop"] = fmt::format(
          "skipped: two layers' caches ({} bytes) exceed 80% of the "
          "free device memory ({} bytes)",
          2 * layer_bytes, free_bytes);
      return row;
    }
    Buf stack(size_t(layers) * layer_bytes);
    cuda_flash::launch_fill_random(stack.p, int64_t(stack.n / elem), elem, kind_of(s.kv), seed + 3,
                                   elem == 1 ? 4.f : 1.f, nullptr);
    std::vector<AttentionArgs> per_layer(size_t(layers), a);
    for (int i = 0; i < layers; ++i) {
      uint8_t* base = stack.as<uint8_t>() + size_t(i) * layer_bytes;
      per_layer[size_t(i)].kv.k = base;
      if (!s.mla()) per_layer[size_t(i)].kv.v = base + cache_bytes;
    }
    const double loop = T.median_ms(
        [&](cudaStream_t st) {
          for (const AttentionArgs& la : per_layer) be->run(la, st);
        },
        std::max(10, reps / 2), L2::kClean, true);
    row["layers"] = layers;
    row["ms_layer_loop"] = loop / layers;
    row["GBps_layer_loop"] = bytes * layers / loop / 1e6;
  }
  return row;
}

json ceilings(Timer& T) {
  const size_t bytes = size_t(4) << 30;
  Buf x(bytes), y(bytes), sink(kProbeCtas * 4);
  cuda_flash::launch_fill_random(x.p, bytes / 4, 4, 4, 7, 1.f, nullptr);
  ck(cudaMemset(sink.p, 0, sink.n), "memset");
  const double copy_ms = T.median_ms(
      [&](cudaStream_t st) {
        ck(cudaMemcpyAsync(y.p, x.p, bytes, cudaMemcpyDeviceToDevice, st), "copy");
      },
      10);
  const double read_ms = T.median_ms(
      [&](cudaStream_t st) {
        cuda_flash::launch_read_probe(x.p, bytes, sink.as<uint32_t>(), kProbeCtas, true, st);
      },
      10);
  return {{"copy_GBps", 2.0 * bytes / copy_ms / 1e6}, {"read_GBps", bytes / read_ms / 1e6}};
}

// A decode row's bytes read once by the read probe (16-byte streaming loads, nothing else) from a
// buffer of that size, the best of a few grid sizes, under both protocols (`probe_ms`,
// `probe_ms_clean_l2`). Launch, DRAM ramp and write-back land in both calls, so the decode's time
// over the probe's is what the kernel adds to a plain read: on the H200, 64 MiB (1x32k 32/4) read
// in 21.9 us against the decode's 31.0 us (s9). At large batch the decode kernel is within a few
// percent of it (faster under the write protocol, slower with a clean L2): no bound there.
struct ProbeMs {
  double ms, ms_clean_l2;
};
ProbeMs read_probe_ms(Timer& T, size_t bytes) {
  static std::map<size_t, ProbeMs> memo;
  if (auto it = memo.find(bytes); it != memo.end()) return it->second;
  constexpr int kMaxCtas = kProbeCtas * 2;
  Buf x(std::max<size_t>(bytes, 16)), sink(kMaxCtas * 4);
  cuda_flash::launch_fill_random(x.p, int64_t(x.n / 4), 4, 4, 11, 1.f, nullptr);
  ck(cudaMemset(sink.p, 0, sink.n), "memset");
  ProbeMs f{1e30, 1e30};
  for (int ctas = 132; ctas <= kMaxCtas; ctas *= 2) {
    const auto probe = [&](cudaStream_t st) {
      cuda_flash::launch_read_probe(x.p, int64_t(bytes), sink.as<uint32_t>(), ctas, true, st);
    };
    f.ms = std::min(f.ms, T.median_ms(probe, 50));
    f.ms_clean_l2 = std::min(f.ms_clean_l2, T.median_ms(probe, 50, L2::kClean));
  }
  return memo[bytes] = f;
}

}  // namespace

int run_cuda_bench(const BenchOptions& o) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw Unsupported("attnkit bench --device cuda: no CUDA GPU is visible to this process");
  }
  int dev = 0;
  cudaDeviceProp prop{};
  ck(cudaGetDevice(&dev), "cudaGetDevice");
  ck(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  int driver = 0;
  cudaDriverGetVersion(&driver);
  std::ofstream file;
  if (o.out_path) file.open(*o.out_path);
  auto emit = [&](const json& j) {
    const std::string line = j.dump();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (file) file << line << "\n" << std::flush;
  };
  Timer T;
  json head = {{"kind", "device"},
               {"device", prop.name},
               {"sm_count", prop.multiProcessorCount},
               {"cc", prop.major * 10 + prop.minor},
               {"driver", driver}};
  head.update(ceilings(T));
  head["empty_kernel_us"] = read_probe_ms(T, 0).ms * 1e3;  // a launch with nothing to read
  emit(head);
  Arena A;
  uint64_t seed = o.seed.value_or(100);
  int failures = 0;
  CudaFlashOptions opt;  // every row's backend options, from the command line
  opt.force_num_splits = o.splits;
  opt.uniform_splits = o.uniform_splits;
  opt.mla_form = o.mla_form == "wide"     ? cuda_mla::kWideForm
                 : o.mla_form == "hopper" ? cuda_mla::kHopperForm
                                          : 0;
  opt.generation = cuda_flash_generation(o.variant);
  opt.hopper_any_length = o.hopper_any_length;
  opt.decode_occupancy = o.decode_occupancy == "floor" ? 1 : o.decode_occupancy == "own" ? 2 : 0;
  opt.early_copies = o.early_copies == "always" ? 1 : o.early_copies == "never" ? 2 : 0;
  auto go = [&](const Shape& s, int reps) {
    const CacheLayout lay{seed++, o.sequential_blocks, o.pool};
    json row = run_shape(s, A, T, reps, lay, opt);
    row["seed"] = lay.seed;
    if (!s.contiguous()) {
      row["block_table"] = o.sequential_blocks ? "sequential" : "shuffled";
      row["pool"] = o.pool;
    }
    if (!s.lens.empty()) row["batch_lens"] = s.lens_text;
    // as asked; "form" is the one that ran
    if (s.mla())
      row["mla_form"] = o.mla_form;
    else
      row["variant"] = o.variant;
    if (o.decode_occupancy != "auto") row["decode_occupancy"] = o.decode_occupancy;
    if (o.early_copies != "auto") row["early_copies_option"] = o.early_copies;
    if (!row["ok"].get<bool>()) ++failures;
    if (s.kind != "prefill" && !s.contiguous()) {
      const ProbeMs f = read_probe_ms(T, size_t(s.kv_bytes()));
      row["probe_ms"] = f.ms;
      row["probe_ms_clean_l2"] = f.ms_clean_l2;
    }
    emit(row);
  };
  if (o.suite == "prefill" || o.suite == "all") {
    const std::vector<int> seqs =
        o.quick ? std::vector<int>{1024, 4096} : std::vector<int>{1024, 4096, 16384};
    const KvCacheDType kv =
        o.prefill_kv == "fp8_e4m3" ? KvCacheDType::kFp8E4M3 : KvCacheDType::kBFloat16;
    for (auto [d, dv] : parse_head_sizes(o.prefill_heads, "--prefill-heads"))
      for (int s : seqs)
        for (bool causal : {false, true}) {
          if (o.prefill_image > 0 && !cuda_flash::mm_prefix_built(d, dv)) continue;  // refused
          const int h = 2048 / d;
          const int w = o.prefill_window - 1;  // -1: none
          go({.kind = "prefill",
              .batch = 16384 / s,
              .hq = h,
              .hkv = h,
              .head = d,
              .seq_q = s,
              .seq_k = s,
              .page = 128,
              .causal = causal,
              .kv = kv,
              .image = o.prefill_image,
              .wl = w,
              .wr = causal ? -1 : w,
              .dv = dv == d ? 0 : dv},
             20);
        }
  }
  if (o.suite == "encoder" || o.suite == "all") {
    // Encoder-only layers (BERT-base, ModernBERT-base: 12 heads of 64), 32k tokens per batch
    // (16k at 8k tokens), bidirectional, over the step's contiguous K/V rows.
    const std::vector<std::pair<int, int> > grid =
        o.quick ? std::vector<std::pair<int, int> >{{64, 512}}
                : std::vector<std::pair<int, int> >{{256, 128}, {64, 512}, {16, 2048}, {2, 8192}};
    // ModernBERT's local layers: the keys within 64 of the query, both sides.
    for (int window : {0, 64})
      for (auto [b, len] : grid)
        go({.kind = "encoder",
            .batch = b,
            .hq = 12,
            .hkv = 12,
            .head = 64,
            .seq_q = len,
            .seq_k = len,
            .page = len,
            .causal = false,
            .kv = KvCacheDType::kBFloat16,
            .wl = window ? window : -1,
            .wr = window ? window : -1},
           20);
  }
  // A decode batch's shape: uniform batches by their count and length, ragged ones by every
  // sequence's length.
  auto decode_shape = [&o](const std::string& kind, const DecodeBatch& d, int hq, int hkv, int head,
                           int page, KvCacheDType kv) {
    const int q = kind == "decode" ? o.decode_q : 1;
    Shape s{kind, int(d.lens.size()), hq, hkv, head, q, d.longest(), page, true, kv};
    if (kind == "decode") s.chunk = o.decode_chunk;
    if (d.ragged()) {
      s.lens = d.lens;
      s.lens_text = d.text;
    }
    return s;
  };
  if (o.suite == "decode" || o.suite == "all") {
    // The last batch is the load-balance case of serving: one long sequence among short ones.
    const std::vector<DecodeBatch> grid =
        parse_decode_grid(!o.decode_grid.empty() ? o.decode_grid
                          : o.quick              ? "1x32768,64x4096"
                                    : "1x32768,16x8192,64x4096,256x2048,1x65536+63x1024");
    const std::vector<int> pages = o.quick ? std::vector<int>{16} : std::vector<int>{16, 64, 128};
    const std::vector<std::pair<int, int> > heads = parse_heads_list(o.decode_heads);
    for (KvCacheDType kv : {KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3})
      for (const auto& [hq, hkv] : heads)
        for (const DecodeBatch& d : grid)
          for (int page : pages)
            go(decode_shape("decode", d, hq, hkv, o.decode_head, page, kv), 50);
  }
  if (o.suite == "mixed" || o.suite == "all") {
    // Chunked-prefill steps (vLLM's order: the decodes first, then the chunks): nd decodes over
    // ctx keys each, then one chunk of `chunk` new tokens whose sequence then holds `pctx` keys.
    struct Mixed {
      int nd, ctx, chunk, pctx;
    };
    auto mixed_shape = [](const std::string& kind, const Mixed& m, int hq, int hkv, int head,
                          int page, KvCacheDType kv) {
      Shape s{kind, m.nd + 1, hq, hkv, head, m.chunk, std::max(m.ctx, m.pctx), page, true, kv};
      s.lens.assign(size_t(m.nd), m.ctx);
      s.lens.push_back(m.pctx);
      s.lens_text = fmt::format("{}x{}+1x{}", m.nd, m.ctx, m.pctx);
      s.qlens.assign(size_t(m.nd), 1);
      s.qlens.push_back(m.chunk);
      return s;
    };
    // The last: two decodes, too little to read for a part of their own
    // (CudaFlashOptions::part_min_decode_bytes); ms_parts_below_threshold is what parts cost.
    const std::vector<Mixed> grid = o.quick ? std::vector<Mixed>{{63, 4096, 512, 4096}}
                                            : std::vector<Mixed>{{63, 4096, 512, 4096},
                                                                 {255, 2048, 2048, 2048},
                                                                 {15, 8192, 1024, 8192},
                                                                 {7, 32768, 256, 1024},
                                                                 {2, 1000, 512, 1000}};
    for (KvCacheDType kv : {KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3})
      for (int hkv : {8, 4})
        for (const Mixed& m : grid) go(mixed_shape("mixed", m, 32, hkv, o.decode_head, 16, kv), 30);
    // CUDA_MLA's steps over a DeepSeek-V3 latent cache (page 64), 128 heads and 16.
    const std::vector<Mixed> mla_grid = o.quick ? std::vector<Mixed>{{63, 4096, 512, 4096}}
                                                : std::vector<Mixed>{{63, 4096, 512, 4096},
                                                                     {255, 2048, 1024, 2048},
                                                                     {15, 8192, 2048, 8192},
                                                                     {2, 1000, 512, 1000}};
    for (KvCacheDType kv : {KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3})
      for (int hq : {128, 16})
        for (const Mixed& m : mla_grid) go(mixed_shape("mla_mixed", m, hq, 1, 576, 64, kv), 20);
  }
  if (o.suite == "mla" || o.suite == "all") {
    // CUDA_MLA decode over a DeepSeek-V3 latent cache (page 64): 128 heads (one GPU) and 16 (the
    // heads of one GPU under 8-way tensor parallelism).
    const std::vector<DecodeBatch> grid =
        parse_decode_grid(!o.decode_grid.empty() ? o.decode_grid
                          : o.quick              ? "1x32768,64x4096"
                                    : "1x32768,16x8192,64x4096,128x4096,1x65536+63x1024");
    for (KvCacheDType kv : {KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3})
      for (int hq : {128, 16})
        for (const DecodeBatch& d : grid) go(decode_shape("mla_decode", d, hq, 1, 576, 64, kv), 20);
  }
  return failures == 0 ? 0 : 1;
}

#endif

}  // namespace attnkit::cli
