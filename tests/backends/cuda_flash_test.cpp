// CUDA_FLASH (v2, and v3 on SM90: run_case runs every case under both) and CUDA_MLA against the
// fp64 CPU_REFERENCE oracle on the GPU: fresh random inputs, awkward
// lengths (0, 1, 54, 97, 1013), page size 1, MQA/GQA, shuffled block tables, NaN-poisoned unused
// cache slots and a poisoned output, every feature, fp8 KV, forced split-KV, CUDA-graph capture
// with replan and replay. Skips (GTEST_SKIP) without CUDA kernels or without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "../far_offsets.hpp"
#include "attnkit/error.hpp"
#include "attnkit/numeric.hpp"
#include "backends/cpu_reference/cpu_reference_backend.hpp"
#include "backends/cuda_flash/capabilities.hpp"
#include "backends/cuda_flash/cuda_flash_backend.hpp"
#include "backends/cuda_flash/flash_params.hpp"
#include "backends/cuda_flash/manifest.hpp"
#include "backends/cuda_flash/tiles.hpp"
#include "backends/cuda_mla/capabilities.hpp"
#include "backends/cuda_mla/cuda_mla_backend.hpp"
#include "backends/cuda_mla/manifest.hpp"
#include "select/generation_policy.hpp"
#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
#include <cuda_runtime.h>

#include "backends/cuda_mla/mla_forms.hpp"
#include "backends/cuda_mla/mla_tiles.hpp"
#endif

namespace attnkit {
namespace {

#if defined(ATTNKIT_CUDA_FLASH_KERNELS)

bool gpu_present() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

#define ATTNKIT_SKIP_WITHOUT_GPU() \
  if (!gpu_present()) GTEST_SKIP() << "no CUDA GPU visible";

void ck(cudaError_t e) { ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e); }

struct DevBuf {
  void* p = nullptr;
  size_t n = 0;
  DevBuf() = default;
  explicit DevBuf(size_t bytes) : n(bytes) {
    if (bytes) EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; }
  DevBuf& operator=(DevBuf&& o) noexcept {
    std::swap(p, o.p);
    std::swap(n, o.n);
    return *this;
  }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p);
  }
};
template <typename T>
DevBuf upload(const std::vector<T>& v) {
  DevBuf b(v.size() * sizeof(T));
  if (!v.empty()) EXPECT_EQ(cudaMemcpy(b.p, v.data(), b.n, cudaMemcpyHostToDevice), cudaSuccess);
  return b;
}
template <typename T>
std::vector<T> download(const DevBuf& b, size_t count) {
  std::vector<T> v(count);
  if (count)
    EXPECT_EQ(cudaMemcpy(v.data(), b.p, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}

uint16_t act_bits(float x, DType d) {
  return d == DType::kBFloat16 ? float_to_bf16_bits(x) : float_to_fp16_bits(x);
}
float act_float(uint16_t b, DType d) {
  return d == DType::kBFloat16 ? bf16_bits_to_float(b) : fp16_bits_to_float(b);
}

struct Case {
  std::string name;
  DType dtype = DType::kBFloat16;
  KvCacheDType kv = KvCacheDType::kBFloat16;
  ScaleGranularity gran = ScaleGranularity::kNone;
  int head = 128, head_v = 0, hq = 8, hkv = 2, block = 16;
  std::vector<std::pair<int, int>> seqs;  // (q_len, k_len)
  bool causal = true;
  int wl = -1, wr = -1;
  // attention_chunk_size (chunked local attention); with stale_past_chunks the table entries of
  // blocks wholly before a sequence's first row's chunk point at an unwritten (NaN) block, as
  // a manager that released them leaves them
  int chunk = 0;
  bool stale_past_chunks = false;
  bool chunk_pieces = false;  // CudaFlashOptions::chunk_pieces
  float softcap = 0.f;
  bool alibi = false, sinks = false;
  int force_splits = 0;
  int out_pad = 0;       // extra elements per output head that must stay untouched
  float k_growth = 0.f;  // key j of a sequence has its K row scaled by 1 + k_growth * j
  float q_amp = 1.f;     // Q's magnitude; the softmax scale is divided by it
  // CUDA_MLA: one latent cache (no V tensor; V = the first head_v elements of each K row).
  bool mla = false;
  int mla_form = 0;    // CudaFlashOptions::mla_form
  int generation = 0;  // CudaFlashOptions::generation (0: every one the device has, run_case)
  bool hopper_any_length = false;  // CudaFlashOptions::hopper_any_length
  bool one_part = false;           // CudaFlashOptions::one_part
  bool concurrent_parts = true;    // CudaFlashOptions::concurrent_parts
  // CudaFlashOptions::part_min_decode_bytes; 0 (not the library's default): every decode run of
  // these small batches is a part of its own
  int64_t part_min_decode_bytes = 0;
  // PrefixLM ranges per sequence ({start, end} key positions); empty: none given.
  std::vector<std::vector<std::pair<int, int>>> mm;
  // The first used K block starts past this many bytes of the cache (the blocks below are
  // allocated but never written or read): offsets beyond 32 bits.
  int64_t base_bytes = 0;
  // Query and output token strides that put the last token past 2^31 elements (views into
  // larger buffers; only the tokens' rows are written).
  bool far_tokens = false;
  bool check_args = false;  // CudaFlashOptions::check_args
  int early_copies = 0;     // CudaFlashOptions::early_copies
  bool settled = false;     // AttentionBatch::earlier_rows_settled, at plan() and run()
};

// Everything one case needs on host and device; the cache is written through write_kv.
struct Problem {
  Case c;
  int hv = 0, G = 0, total_q = 0, num_blocks = 0, bt_stride = 0, elem = 2;
  int base = 0;  // first block the table uses (Case::base_bytes)
  std::vector<int32_t> cu, used, bt, mm_off, mm_rng;
  std::vector<uint16_t> q;
  std::vector<float> k_src, v_src, k_scale, v_scale, slopes, sinks;
  std::vector<int64_t> slots;
  std::vector<uint8_t> k_cache, v_cache;  // host copies after the device write
  KvCacheView view;                       // device pointers
  DevBuf dk, dv, dq, dks, dvs, dcu, dused, dbt, dslopes, dsinks, dslots, dmm_off, dmm_rng;
  int64_t stride_tok = 0, stride_head = 0, stride_block = 0;
  int64_t vstride_tok = 0, vstride_head = 0, vstride_block = 0;
};

bool is_fp8(KvCacheDType d) { return d == KvCacheDType::kFp8E4M3 || d == KvCacheDType::kFp8E5M2; }

void build(Problem& P, const Case& c, std::mt19937& rng) {
  P.c = c;
  P.hv = c.head_v ? c.head_v : c.head;
  P.G = c.hq / c.hkv;
  P.elem = is_fp8(c.kv) ? 1 : 2;
  std::uniform_real_distribution<float> U(-1.f, 1.f);
  P.cu = {0};
  int max_pages = 1;
  for (auto [ql, kl] : c.seqs) {
    P.cu.push_back(P.cu.back() + ql);
    P.used.push_back(kl);
    max_pages = std::max(max_pages, (kl + c.block - 1) / c.block);
  }
  P.total_q = P.cu.back();
  if (!c.mm.empty()) {
    P.mm_off = {0};
    for (const auto& ranges : c.mm) {
      for (auto [a, e] : ranges) P.mm_rng.insert(P.mm_rng.end(), {a, e});
      P.mm_off.push_back(int32_t(P.mm_rng.size() / 2));
    }
    P.dmm_off = upload(P.mm_off);
    P.dmm_rng = upload(P.mm_rng);
  }
  const int ns = int(c.seqs.size());
  P.stride_tok = int64_t(c.head) * P.elem;
  P.stride_head = P.stride_tok * c.block;
  P.stride_block = P.stride_head * c.hkv;
  P.vstride_tok = c.mla ? 0 : int64_t(P.hv) * P.elem;
  P.vstride_head = P.vstride_tok * c.block;
  P.vstride_block = P.vstride_head * c.hkv;
  P.base = c.base_bytes > 0 ? int(c.base_bytes / P.stride_block + 1) : 0;
  P.bt_stride = max_pages + 1;
  P.num_blocks = P.base + ns * max_pages + 3;
  // Shuffled physical blocks; unused table entries point at garbage indices on purpose.
  std::vector<int32_t> perm(P.num_blocks - P.base);
  std::iota(perm.begin(), perm.end(), P.base);
  std::shuffle(perm.begin(), perm.end(), rng);
  P.bt.assign(size_t(ns) * P.bt_stride, 1 << 30);
  int next = 0;
  for (int s = 0; s < ns; ++s)
    for (int j = 0; j < (P.used[s] + c.block - 1) / c.block; ++j)
      P.bt[size_t(s) * P.bt_stride + j] = perm[next++];
  // Slot mapping: every key of every sequence, in order.
  for (int s = 0; s < ns; ++s)
    for (int j = 0; j < P.used[s]; ++j)
      P.slots.push_back(int64_t(P.bt[size_t(s) * P.bt_stride + j / c.block]) * c.block +
                        j % c.block);
  const int nk = int(P.slots.size());
  P.k_src.resize(size_t(nk) * c.hkv * c.head);
  P.v_src.resize(c.mla ? 0 : size_t(nk) * c.hkv * P.hv);
  const float amp = is_fp8(c.kv) ? 3.f : 1.f;  // exercise the fp8 range
  for (auto& x : P.k_src) x = U(rng) * amp;
  for (auto& x : P.v_src) x = U(rng) * amp;
  if (c.k_growth > 0.f) {
    const size_t row = size_t(c.hkv) * c.head;
    size_t key = 0;
    for (int s = 0; s < ns; ++s)
      for (int j = 0; j < P.used[s]; ++j, ++key)
        for (size_t e = 0; e < row; ++e) P.k_src[key * row + e] *= 1.f + c.k_growth * float(j);
  }
  P.q.resize(size_t(P.total_q) * c.hq * c.head);
  for (auto& x : P.q) x = act_bits(U(rng) * c.q_amp, c.dtype);

  // Poison the cache with NaN from the first used block on; only written slots may be read.
  const size_t kbytes = size_t(P.stride_block) * (P.num_blocks - P.base);
  const size_t vbytes = size_t(P.vstride_block) * (P.num_blocks - P.base);
  std::vector<uint8_t> poison_k(kbytes), poison_v(vbytes);
  auto fill_nan = [&](std::vector<uint8_t>& b) {
    if (P.elem == 1) {
      std::fill(b.begin(), b.end(), uint8_t(0x7f));
    } else {
      const uint16_t nan = c.kv == KvCacheDType::kBFloat16 ? 0x7fc0 : 0x7e00;
      for (size_t i = 0; i + 1 < b.size(); i += 2) std::memcpy(&b[i], &nan, 2);
    }
  };
  fill_nan(poison_k);
  fill_nan(poison_v);
  auto upload_top = [&](const std::vector<uint8_t>& top, int64_t block_bytes) {
    DevBuf b(size_t(block_bytes) * P.num_blocks);
    EXPECT_EQ(cudaMemcpy(b.as<uint8_t>() + block_bytes * P.base, top.data(), top.size(),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    return b;
  };
  P.dk = upload_top(poison_k, P.stride_block);
  if (!c.mla) P.dv = upload_top(poison_v, P.vstride_block);
  if (c.gran != ScaleGranularity::kNone) {
    const int n = c.gran == ScaleGranularity::kPerHead ? c.hkv : 1;
    for (int i = 0; i < n; ++i) {
      P.k_scale.push_back(0.25f + 0.125f * i);
      if (!c.mla) P.v_scale.push_back(0.5f + 0.25f * i);  // MLA: the latent's one scale
    }
    P.dks = upload(P.k_scale);
    P.dvs = upload(P.v_scale);
  }
  if (c.alibi)
    for (int h = 0; h < c.hq; ++h) P.slopes.push_back(std::exp2(-8.f * (h + 1) / c.hq));
  if (c.sinks)
    for (int h = 0; h < c.hq; ++h) P.sinks.push_back(U(rng) * 2.f);
  P.dslopes = upload(P.slopes);
  P.dsinks = upload(P.sinks);
  P.dq = upload(P.q);
  P.dcu = upload(P.cu);
  P.dused = upload(P.used);
  if (c.chunk > 0 && c.stale_past_chunks)
    for (int s = 0; s < ns; ++s) {
      const int64_t first_row = int64_t(P.used[s]) - c.seqs[size_t(s)].first;
      const int64_t first_key = first_row > 0 ? chunk_first_key(first_row, c.chunk) : 0;
      for (int64_t j = 0; (j + 1) * c.block <= first_key; ++j)
        P.bt[size_t(s) * P.bt_stride + size_t(j)] = perm[size_t(next)];  // never written
    }
  P.dbt = upload(P.bt);
  P.dslots = upload(P.slots);

  KvCacheView& v = P.view;
  v.k = P.dk.p;
  v.v = P.dv.p;  // null for MLA
  v.dtype = c.kv;
  v.num_blocks = P.num_blocks;
  v.block_size = c.block;
  v.num_kv_heads = c.hkv;
  v.head_size = c.head;
  v.head_size_v = P.hv;
  v.stride_block = P.stride_block;
  v.stride_head = P.stride_head;
  v.stride_token = P.stride_tok;
  v.v_stride_block = P.vstride_block;
  v.v_stride_head = P.vstride_head;
  v.v_stride_token = P.vstride_tok;
  v.scale_granularity = c.gran;
  v.k_scale = P.dks.as<float>();
  v.v_scale = P.dvs.as<float>();
}

// Writes the fp32 K/V rows into the device cache with CUDA_FLASH's write_kv and keeps a host copy.
void write_cache(Problem& P, AttentionBackend& be) {
  DevBuf ks = upload(P.k_src), vs = upload(P.v_src);
  KvWriteArgs w;
  w.k = ks.p;
  w.v = vs.p;  // null for MLA (the latent rows are K's)
  w.dtype = DType::kFloat32;
  w.num_tokens = int(P.slots.size());
  w.k_stride_token = int64_t(P.c.hkv) * P.c.head;
  w.k_stride_head = P.c.head;
  w.v_stride_token = int64_t(P.c.hkv) * P.hv;
  w.v_stride_head = P.hv;
  w.slot_mapping = P.dslots.as<int64_t>();
  w.cache = P.view;
  be.write_kv(w, nullptr);
  ck(cudaDeviceSynchronize());
  // From the first used block on (Problem::base): the reference's cache starts there.
  auto download_top = [&](const DevBuf& b, int64_t block_bytes) {
    std::vector<uint8_t> v(b.n - size_t(block_bytes) * P.base);
    EXPECT_EQ(cudaMemcpy(v.data(), b.as<uint8_t>() + block_bytes * P.base, v.size(),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    return v;
  };
  P.k_cache = download_top(P.dk, P.stride_block);
  if (!P.c.mla) P.v_cache = download_top(P.dv, P.vstride_block);
}

AttentionLayerParams layer_of(const Problem& P, bool device) {
  AttentionLayerParams L;
  L.num_heads = P.c.hq;
  L.num_kv_heads = P.c.hkv;
  L.head_size = P.c.head;
  L.head_size_v = P.hv;
  L.dtype = P.c.dtype;
  L.scale = 1.f / std::sqrt(float(P.c.head)) / P.c.q_amp;
  L.causal = P.c.causal;
  L.window_left = P.c.wl;
  L.window_right = P.c.wr;
  L.attention_chunk_size = P.c.chunk;
  L.logits_soft_cap = P.c.softcap;
  if (P.c.alibi) L.alibi_slopes = device ? P.dslopes.as<float>() : P.slopes.data();
  if (P.c.sinks) L.sinks = device ? P.dsinks.as<float>() : P.sinks.data();
  return L;
}

AttentionBatch host_batch(const Problem& P) {
  AttentionBatch b;
  b.num_seqs = int(P.c.seqs.size());
  b.total_q = P.total_q;
  for (auto [ql, kl] : P.c.seqs) {
    b.max_seqlen_q = std::max(b.max_seqlen_q, ql);
    b.max_seqlen_k = std::max(b.max_seqlen_k, kl);
  }
  b.cu_seqlens_q = P.cu.data();
  b.seqused_k = P.used.data();
  b.block_table = P.bt.data();
  b.block_table_stride = P.bt_stride;
  if (!P.mm_off.empty()) {
    b.mm_prefix_offsets = P.mm_off.data();
    b.mm_prefix_ranges = P.mm_rng.data();
  }
  return b;
}

struct Outputs {
  std::vector<uint16_t> out;
  std::vector<float> lse;
};

// The oracle on host copies of everything.
Outputs reference(const Problem& P) {
  auto ref = make_cpu_reference_backend();
  AttentionBatch b = host_batch(P);
  AttentionLayerParams L = layer_of(P, false);
  ref->plan(b, L);
  std::vector<uint8_t> k = P.k_cache, v = P.v_cache;
  // The host copies start at block P.base: the table's used entries move down by it.
  std::vector<int32_t> bt = P.bt;
  for (int32_t& e : bt)
    if (e >= P.base && e < P.num_blocks) e -= P.base;
  b.block_table = bt.data();
  Outputs o;
  const int64_t ostride = int64_t(P.hv) + P.c.out_pad;
  o.out.assign(size_t(P.total_q) * P.c.hq * ostride, 0);
  o.lse.assign(size_t(P.total_q) * P.c.hq, 0.f);
  std::vector<char> ws(ref->workspace_bytes());
  AttentionArgs a;
  a.q = P.q.data();
  a.q_stride_token = int64_t(P.c.hq) * P.c.head;
  a.q_stride_head = P.c.head;
  a.out = o.out.data();
  a.out_stride_token = int64_t(P.c.hq) * ostride;
  a.out_stride_head = ostride;
  a.lse = o.lse.data();
  a.kv = P.view;
  a.kv.num_blocks = P.num_blocks - P.base;
  a.kv.k = k.data();
  a.kv.v = P.c.mla ? nullptr : v.data();
  a.kv.k_scale = P.k_scale.empty() ? nullptr : P.k_scale.data();
  a.kv.v_scale = P.v_scale.empty() ? nullptr : P.v_scale.data();
  a.batch = b;
  a.layer = L;
  a.workspace = ws.empty() ? nullptr : ws.data();
  ref->run(a, nullptr);
  return o;
}

// The device's query and output token stride (elements) of a far_tokens case, else 0.
int64_t far_token_stride(const Problem& P) {
  return P.c.far_tokens ? far_offsets::token_stride(P.total_q) : 0;
}

struct DeviceRun {
  DevBuf out, lse, ws, far_q;
  AttentionArgs args;
  void poison_out() {  // NaN in fp16 and bf16: a replay must write every output element again
    std::vector<uint16_t> nan(out.n / 2, 0x7fff);
    ck(cudaMemcpy(out.p, nan.data(), out.n, cudaMemcpyHostToDevice));
  }
};

// One be.run(args) captured into a CUDA graph on its own stream, replayed on demand.
struct CapturedRun {
  cudaStream_t s = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CapturedRun(AttentionBackend& be, const AttentionArgs& args) {
    ck(cudaStreamCreate(&s));
    ck(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    be.run(args, s);
    ck(cudaStreamEndCapture(s, &graph));
    ck(cudaGraphInstantiate(&exec, graph, 0));
  }
  CapturedRun(const CapturedRun&) = delete;
  CapturedRun& operator=(const CapturedRun&) = delete;
  ~CapturedRun() {
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
  }
  void replay() {
    ck(cudaGraphLaunch(exec, s));
    ck(cudaStreamSynchronize(s));
  }
};

void prepare_run(Problem& P, AttentionBackend& be, DeviceRun& r) {
  const int64_t ostride = int64_t(P.hv) + P.c.out_pad;
  const size_t n_out = size_t(P.total_q) * P.c.hq * ostride;
  std::vector<uint16_t> poison(n_out, 0x7fff);  // NaN in fp16 and bf16
  const int64_t far = far_token_stride(P);
  const size_t o_row = size_t(P.c.hq) * ostride * 2, q_row = size_t(P.c.hq) * P.c.head * 2;
  if (far) {  // rows at a stride of `far` elements; zero between them
    r.out = DevBuf(size_t(far) * 2 * P.total_q);
    ck(cudaMemset(r.out.p, 0, r.out.n));
    ck(cudaMemcpy2D(r.out.p, size_t(far) * 2, poison.data(), o_row, o_row, size_t(P.total_q),
                    cudaMemcpyHostToDevice));
    r.far_q = DevBuf(size_t(far) * 2 * P.total_q);
    ck(cudaMemcpy2D(r.far_q.p, size_t(far) * 2, P.q.data(), q_row, q_row, size_t(P.total_q),
                    cudaMemcpyHostToDevice));
  } else {
    r.out = upload(poison);
  }
  std::vector<float> lpoison(size_t(P.total_q) * P.c.hq, std::nanf(""));
  r.lse = upload(lpoison);
  AttentionBatch hb = host_batch(P);
  hb.earlier_rows_settled = P.c.settled;
  be.plan(hb, layer_of(P, true));
  r.ws = DevBuf(be.workspace_bytes());
  AttentionArgs& a = r.args;
  a.q = far ? r.far_q.p : P.dq.p;
  a.q_stride_token = far ? far : int64_t(P.c.hq) * P.c.head;
  a.q_stride_head = P.c.head;
  a.out = r.out.p;
  a.out_stride_token = far ? far : int64_t(P.c.hq) * ostride;
  a.out_stride_head = ostride;
  a.lse = r.lse.as<float>();
  a.kv = P.view;
  a.batch = hb;
  a.batch.cu_seqlens_q = P.dcu.as<int32_t>();
  a.batch.seqused_k = P.dused.as<int32_t>();
  a.batch.block_table = P.dbt.as<int32_t>();
  if (!P.mm_off.empty()) {
    a.batch.mm_prefix_offsets = P.dmm_off.as<int32_t>();
    a.batch.mm_prefix_ranges = P.dmm_rng.as<int32_t>();
  }
  a.layer = layer_of(P, true);
  a.workspace = r.ws.p;
}

// Relative L2 error over every written element; empty rows must be exactly 0 (lse -inf or sink);
// the per-head padding must keep its poison.
void compare(const Problem& P, const Outputs& ref, const DevBuf& dout, const DevBuf& dlse,
             const std::string& what) {
  const int64_t ostride = int64_t(P.hv) + P.c.out_pad;
  std::vector<uint16_t> out;
  int bad = 0;
  if (const int64_t far = far_token_stride(P)) {  // each token's row and the 32 elements after it
    const size_t row = size_t(P.c.hq) * ostride;
    std::vector<uint16_t> rows(P.total_q * (row + 32));
    ck(cudaMemcpy2D(rows.data(), (row + 32) * 2, dout.p, size_t(far) * 2, (row + 32) * 2,
                    size_t(P.total_q), cudaMemcpyDeviceToHost));
    for (int t = 0; t < P.total_q; ++t) {
      out.insert(out.end(), rows.begin() + t * (row + 32), rows.begin() + t * (row + 32) + row);
      for (size_t i = 0; i < 32; ++i)
        if (rows[t * (row + 32) + row + i] != 0 && bad++ < 5)
          ADD_FAILURE() << what << ": written past token " << t << "'s output row";
    }
  } else {
    out = download<uint16_t>(dout, ref.out.size());
  }
  auto lse = download<float>(dlse, ref.lse.size());
  double num = 0, den = 0, lse_err = 0;
  for (int t = 0; t < P.total_q; ++t)
    for (int h = 0; h < P.c.hq; ++h) {
      const size_t row = (size_t(t) * P.c.hq + h) * ostride;
      for (int e = 0; e < P.hv; ++e) {
        const float g = act_float(out[row + e], P.c.dtype);
        const float r = act_float(ref.out[row + e], P.c.dtype);
        if (!std::isfinite(g)) {
          if (bad++ < 5)
            ADD_FAILURE() << what << ": non-finite out at t=" << t << " h=" << h << " e=" << e;
          continue;
        }
        num += double(g - r) * (g - r);
        den += double(r) * r;
      }
      for (int e = P.hv; e < ostride; ++e)
        if (out[row + e] != 0x7fff && bad++ < 5)
          ADD_FAILURE() << what << ": padding written at t=" << t << " h=" << h;
      const float rl = ref.lse[size_t(t) * P.c.hq + h], gl = lse[size_t(t) * P.c.hq + h];
      if (std::isinf(rl)) {
        if (!(std::isinf(gl) && gl < 0) && bad++ < 5)
          ADD_FAILURE() << what << ": lse " << gl << " expected -inf at t=" << t << " h=" << h;
      } else {
        lse_err = std::max(lse_err, double(std::fabs(gl - rl)));
        if (!std::isfinite(gl) && bad++ < 5) ADD_FAILURE() << what << ": lse not finite";
      }
    }
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  const double tol = P.c.dtype == DType::kBFloat16 ? 1.2e-2 : 4e-3;
  EXPECT_LE(rel, tol) << what << ": relative L2 error";
  EXPECT_LE(lse_err, 5e-3) << what << ": max |lse - ref|";
  EXPECT_EQ(bad, 0) << what;
}

// A case ready to run: its problem built from `seed`, a backend forcing the case's split count
// (0: the heuristic's), the cache written through it and the device arguments prepared.
struct PreparedCase {
  Problem P;
  std::unique_ptr<AttentionBackend> be;
  DeviceRun r;
  PreparedCase(const Case& c, uint32_t seed) {
    std::mt19937 rng(seed);
    build(P, c, rng);
    CudaFlashOptions opt;
    opt.force_num_splits = c.force_splits;
    opt.mla_form = c.mla_form;
    opt.generation = c.generation;
    opt.hopper_any_length = c.hopper_any_length;
    opt.one_part = c.one_part;
    opt.concurrent_parts = c.concurrent_parts;
    opt.part_min_decode_bytes = c.part_min_decode_bytes;
    opt.chunk_pieces = c.chunk_pieces;
    opt.check_args = c.check_args;
    opt.early_copies = c.early_copies;
    be = c.mla ? make_cuda_mla_backend(opt) : make_cuda_flash_backend(opt);
    write_cache(P, *be);
    prepare_run(P, *be, r);
  }
};

int device_cc() {
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess)
    return 0;
  return prop.major * 10 + prop.minor;
}

// Whether decode kernels launch as programmatic dependents, which early copies need (SM90, unless
// ATTNKIT_CUDA_PDL=0).
bool pdl_on() {
  const char* env = std::getenv("ATTNKIT_CUDA_PDL");
  return device_cc() >= 90 && !(env && std::string_view(env) == "0");
}

// Runs the case once per CUDA_FLASH generation the device has (v2, and v3 on SM90, whose Hopper
// form takes 16-bit prefill at heads 64/128/256), or under the case's own; returns the forms
// that ran.
std::vector<int> run_case(const Case& c, uint32_t seed) {
  std::vector<int> gens = {c.generation};
  if (!c.mla && c.generation == 0) gens = device_cc() == 90 ? std::vector{2, 3} : std::vector{2};
  std::vector<int> forms;
  for (int gen : gens) {
    Case cg = c;
    cg.generation = gen;
    PreparedCase pc(cg, seed);
    pc.be->run(pc.r.args, nullptr);
    ck(cudaDeviceSynchronize());
    forms.push_back(cuda_flash_planned_form(*pc.be));
    compare(pc.P, reference(pc.P), pc.r.out, pc.r.lse,
            c.name + " (generation " + std::to_string(gen) + ", form " +
                std::to_string(forms.back()) + ", splits " +
                std::to_string(cuda_flash_planned_splits(*pc.be)) + ")");
  }
  return forms;
}

// Runs the case once under its own options against the reference; returns the form, the keys
// per split of a ragged plan (0: one count for every sequence) and the (largest) split count.
struct PlannedRun {
  int form, chunk, splits;
};
PlannedRun run_planned(const Case& c, uint32_t seed) {
  PreparedCase pc(c, seed);
  pc.be->run(pc.r.args, nullptr);
  ck(cudaDeviceSynchronize());
  const PlannedRun run{cuda_flash_planned_form(*pc.be), cuda_flash_planned_split_chunk(*pc.be),
                       cuda_flash_planned_splits(*pc.be)};
  compare(pc.P, reference(pc.P), pc.r.out, pc.r.lse,
          c.name + " (form " + std::to_string(run.form) + ", chunk " + std::to_string(run.chunk) +
              ", splits " + std::to_string(run.splits) + ")");
  return run;
}

using Seqs = std::vector<std::pair<int, int>>;
const Seqs kAwkwardDecode = {{1, 0}, {1, 1}, {1, 54}, {1, 97}, {1, 1013}};
// One long decode among short ones: a ragged plan (a split count per sequence).
const Seqs kRaggedDecode = {{1, 60000}, {1, 700}, {1, 300}, {1, 4000}};
const Seqs kAwkwardPrefill = {{1, 1}, {17, 54}, {97, 97}, {64, 300}, {5, 1013}, {0, 7}};

class CudaFlash : public ::testing::Test {
 protected:
  void SetUp() override { ATTNKIT_SKIP_WITHOUT_GPU(); }
};

TEST_F(CudaFlash, DecodeGqaBf16Head128) {
  Case c{.name = "decode bf16 d128 32/8", .hq = 32, .hkv = 8, .seqs = kAwkwardDecode};
  run_case(c, 1);
}

TEST_F(CudaFlash, PrefillFp16Head64PageOne) {
  Case c{.name = "prefill fp16 d64 page 1",
         .dtype = DType::kFloat16,
         .kv = KvCacheDType::kFloat16,
         .head = 64,
         .hq = 4,
         .hkv = 4,
         .block = 1,
         .seqs = kAwkwardPrefill};
  run_case(c, 2);
}

TEST_F(CudaFlash, NonCausalMqaHead256) {
  Case c{.name = "non-causal bf16 d256 MQA",
         .head = 256,
         .hq = 4,
         .hkv = 1,
         .block = 64,
         .seqs = {{33, 33}, {70, 130}, {1, 1013}},
         .causal = false,
         .out_pad = 8};
  run_case(c, 3);
}

TEST_F(CudaFlash, WindowSoftcapAlibiSinks) {
  Case c{.name = "window+softcap+alibi+sinks bf16 d128",
         .hq = 8,
         .hkv = 2,
         .seqs = {{40, 200}, {1, 97}, {128, 128}, {1, 0}},
         .wl = 31,
         .softcap = 30.f,
         .alibi = true,
         .sinks = true};
  run_case(c, 4);
}

// The forms run_case's generations (v2, then v3 on SM90) ran: their prefill forms.
void expect_prefill_forms(const std::vector<int>& forms, const std::string& name) {
  ASSERT_FALSE(forms.empty());
  EXPECT_EQ(forms[0], 0) << name << ": v2's prefill form";
  if (forms.size() > 1) EXPECT_EQ(forms[1], cuda_flash::kHopperPrefillForm) << name << ": v3's";
}

// PrefixLM ranges (docs/semantics.md §4) that widen some row run the prefill forms' kMm kernels
// (v2's prefill form; v3's Hopper form on SM90): image ranges at the start of a chunked prefill,
// ranges ending among the queries and further back, a window that a range reaches below, non-causal
// rows, forced splits, fp8 caches, and a decode row of the same batch that no range widens.
TEST_F(CudaFlash, PrefixLmRangesWidenRows) {
  const std::vector<Case> cases = {
      {.name = "mm paligemma-like image [0, 256) d256 MQA",
       .head = 256,
       .hq = 8,
       .hkv = 1,
       .seqs = {{300, 300}, {120, 420}},
       .mm = {{{0, 256}}, {{0, 256}, {330, 380}}}},
      {.name = "mm d128 GQA 4, ranges among the queries, decode row, window 24",
       .hq = 8,
       .hkv = 2,
       .seqs = {{40, 200}, {1, 97}, {64, 64}},
       .wl = 24,
       .mm = {{{30, 50}, {165, 180}}, {{10, 20}}, {{0, 10}, {30, 50}}}},
      {.name = "mm fp16 d128 forced splits x3 softcap sinks",
       .dtype = DType::kFloat16,
       .kv = KvCacheDType::kFloat16,
       .hq = 4,
       .hkv = 4,
       .seqs = {{100, 700}, {17, 54}},
       .softcap = 30.f,
       .sinks = true,
       .force_splits = 3,
       .mm = {{{590, 650}, {660, 700}}, {{37, 54}}}},
      {.name = "mm fp8 e4m3 d256 window 40 alibi",
       .kv = KvCacheDType::kFp8E4M3,
       .gran = ScaleGranularity::kPerHead,
       .head = 256,
       .hq = 4,
       .hkv = 2,
       .block = 32,
       .seqs = {{97, 97}, {5, 1013}},
       .wl = 40,
       .alibi = true,
       .mm = {{{3, 80}}, {{900, 1010}}}},
      {.name = "mm non-causal window 5/3 fp16 d128",
       .dtype = DType::kFloat16,
       .kv = KvCacheDType::kFloat16,
       .hq = 6,
       .hkv = 3,
       .seqs = {{50, 50}, {20, 90}},
       .causal = false,
       .wl = 5,
       .wr = 3,
       .mm = {{{10, 30}}, {{72, 88}}}},
  };
  uint32_t seed = 21;
  for (const Case& c : cases) expect_prefill_forms(run_case(c, seed++), c.name);
}

// Ranges that widen no row (each query at or past its range's last key, under a causal mask
// without window) leave the plan as it was: a decode batch keeps the decode form.
TEST_F(CudaFlash, PrefixLmRangesThatWidenNoRowKeepThePlan) {
  Case c{.name = "mm decode, ranges behind the queries",
         .hq = 8,
         .hkv = 2,
         .seqs = {{1, 300}, {1, 256}, {1, 97}},
         .mm = {{{0, 256}}, {{0, 256}}, {}}};
  for (int form : run_case(c, 31)) EXPECT_EQ(form, cuda_flash::kV2DecodeForm) << c.name;
  Case d = c;
  d.name = "mm decode with a window the range reaches below";
  d.wl = 8;  // the second query (key 255) lies in [0, 256): its keys widen down to 0
  expect_prefill_forms(run_case(d, 32), d.name);
}

// Heads without a kMm kernel refuse ranges at plan() (the declaration's combination rule says
// so too: CudaFlashDeclaration.PrefixLmAtTheBuiltHeads); CUDA_MLA refuses any; run() refuses
// ranges its plan did not have, and the reverse.
TEST_F(CudaFlash, PrefixLmRangesRefusedWhereNotBuilt) {
  Case c{
      .name = "mm d64", .head = 64, .hq = 8, .hkv = 2, .seqs = {{40, 200}}, .mm = {{{165, 180}}}};
  std::mt19937 rng(21);
  Problem P;
  build(P, c, rng);
  auto be = make_cuda_flash_backend();
  write_cache(P, *be);
  EXPECT_THROW(be->plan(host_batch(P), layer_of(P, true)), Unsupported);

  Case m{.name = "mla mm",
         .head = 576,
         .head_v = 512,
         .hq = 16,
         .hkv = 1,
         .seqs = {{1, 200}},
         .mla = true,
         .mm = {{{0, 100}}}};
  Problem PM;
  build(PM, m, rng);
  auto mla = make_cuda_mla_backend();
  EXPECT_THROW(mla->plan(host_batch(PM), layer_of(PM, true)), Unsupported);

  Case h = c;
  h.head = 128;
  Problem PH;
  build(PH, h, rng);
  auto be128 = make_cuda_flash_backend();
  write_cache(PH, *be128);
  DeviceRun with, without;
  prepare_run(PH, *be128, with);  // planned with the ranges
  with.args.batch.mm_prefix_offsets = nullptr;
  with.args.batch.mm_prefix_ranges = nullptr;
  EXPECT_THROW(be128->run(with.args, nullptr), InvalidArgument);
  PH.mm_off.clear();  // plan without the ranges, then run with them
  prepare_run(PH, *be128, without);
  without.args.batch.mm_prefix_offsets = PH.dmm_off.as<int32_t>();
  without.args.batch.mm_prefix_ranges = PH.dmm_rng.as<int32_t>();
  EXPECT_THROW(be128->run(without.args, nullptr), InvalidArgument);
}

TEST_F(CudaFlash, NonCausalTwoSidedWindow) {
  Case c{.name = "non-causal window 5/3 fp16 d64",
         .dtype = DType::kFloat16,
         .kv = KvCacheDType::kFloat16,
         .head = 64,
         .hq = 6,
         .hkv = 3,
         .seqs = {{50, 50}, {20, 90}},
         .causal = false,
         .wl = 5,
         .wr = 3};
  run_case(c, 5);
}

TEST_F(CudaFlash, Fp8E4m3PerTensor) {
  Case c{.name = "fp8 e4m3 per-tensor bf16 d128",
         .kv = KvCacheDType::kFp8E4M3,
         .gran = ScaleGranularity::kPerTensor,
         .hq = 16,
         .hkv = 4,
         .seqs = {{1, 1013}, {1, 54}, {30, 97}}};
  run_case(c, 6);
}

TEST_F(CudaFlash, Fp8E5m2PerHead) {
  Case c{.name = "fp8 e5m2 per-head fp16 d64",
         .dtype = DType::kFloat16,
         .kv = KvCacheDType::kFp8E5M2,
         .gran = ScaleGranularity::kPerHead,
         .head = 64,
         .hq = 8,
         .hkv = 2,
         .block = 32,
         .seqs = {{1, 300}, {12, 97}, {1, 0}}};
  run_case(c, 7);
}

TEST_F(CudaFlash, ForcedSplitsWithSinksAndShortKeys) {
  // q_len > k_len: the first causal rows see nothing (out 0, lse = sink or -inf).
  Case c{.name = "split-KV x5 sinks",
         .hq = 4,
         .hkv = 2,
         .seqs = {{20, 700}, {10, 4}, {1, 1013}, {3, 0}},
         .sinks = true,
         .force_splits = 5};
  run_case(c, 8);
  Case d = c;
  d.name = "split-KV x7 no sinks d256";
  d.sinks = false;
  d.head = 256;
  d.force_splits = 7;
  run_case(d, 9);
}

// Decode-only batches take the decode form (16-row tiles, warps split the keys) for heads <= 128
// (and over fp8 caches up to 256: Fp8DecodeFormWideHeads).
TEST_F(CudaFlash, DecodeFormEveryFeature) {
  Case c{.name = "decode form window+softcap+alibi+sinks fp16 d64",
         .dtype = DType::kFloat16,
         .kv = KvCacheDType::kFloat16,
         .head = 64,
         .hq = 16,
         .hkv = 2,
         .block = 8,
         .seqs = {{1, 1013}, {1, 0}, {1, 54}, {2, 97}, {1, 1}},
         .wl = 200,
         .softcap = 20.f,
         .alibi = true,
         .sinks = true};
  run_case(c, 14);
  Case d{.name = "decode form fp8 e4m3 per-head bf16 d128 split x3",
         .kv = KvCacheDType::kFp8E4M3,
         .gran = ScaleGranularity::kPerHead,
         .hq = 32,
         .hkv = 4,
         .seqs = {{1, 700}, {1, 33}, {1, 0}},
         .sinks = true,
         .force_splits = 3};
  run_case(d, 15);
}

// Prefill form with two 16-row m-tiles per warp (128-row CTAs, heads 64 and 128): several CTAs
// per sequence with a partial last one, GQA-packed. Decode form with fp8 converted in registers:
// e5m2 with bf16 activations, and head 80 (its last 16 dims take the ldmatrix .x2 path).
TEST_F(CudaFlash, TwoMTilePrefillAndRegisterFp8Decode) {
  Case c{.name = "prefill bf16 d128 8/2 multi-CTA",
         .hq = 8,
         .hkv = 2,
         .seqs = {{200, 260}, {129, 129}, {3, 40}, {33, 1000}}};
  run_case(c, 20);
  Case d{.name = "decode form fp8 e5m2 per-tensor bf16 d80",
         .kv = KvCacheDType::kFp8E5M2,
         .gran = ScaleGranularity::kPerTensor,
         .head = 80,
         .hq = 8,
         .hkv = 2,
         .seqs = {{1, 300}, {1, 65}, {1, 0}, {1, 1}}};
  run_case(d, 21);
  Case e{.name = "decode form fp8 e4m3 per-head fp16 d128 GQA 8",
         .dtype = DType::kFloat16,
         .kv = KvCacheDType::kFp8E4M3,
         .gran = ScaleGranularity::kPerHead,
         .hq = 16,
         .hkv = 2,
         .seqs = {{1, 1013}, {1, 64}, {2, 130}},
         .softcap = 25.f,
         .sinks = true};
  run_case(e, 22);
}

// The decode form on grids that overflow two CTAs per SM runs without the shared-memory floor
// where its tiles leave room (tiles.hpp decode_floor): on SM90 four CTAs per SM at head 64 (fp8
// and 16-bit), three at fp8 96 and 16-bit 80. Batches sized by the device's SM count: one
// sequence per SM (one full wave at those counts when unsplit), and half as many (under the floor
// unless the plan splits them); fresh random lengths, both fp8 formats and bf16, every output
// checked and the occupancy the rule gives.
TEST_F(CudaFlash, DecodeFormOccupancyByGrid) {
  int dev = 0, sms = 0, smem = 0;
  ck(cudaGetDevice(&dev));
  ck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  ck(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  std::mt19937 rng(46);
  std::uniform_int_distribution<int> len(40, 700);
  for (auto [head, fp8] :
       {std::pair{64, true}, std::pair{96, true}, std::pair{64, false}, std::pair{80, false}}) {
    namespace cf = cuda_flash;
    const int kernel = cf::flash_smem_bytes(head, head, fp8, true);
    const int fixed = cf::flash_static_smem_bytes(head, head, fp8, true);
    const int per_sm = cf::ctas_per_sm(smem, kernel + fixed);  // what the kernel itself allows
    const int floored = cf::ctas_per_sm(smem, std::max(kernel, cf::kDecodeMinSmem) + fixed);
    for (int seqs : {sms, sms / 2}) {
      Case c{.name = std::string(fp8 ? "fp8" : "bf16") + " decode d" + std::to_string(head) + " x" +
                     std::to_string(seqs),
             .kv = !fp8          ? KvCacheDType::kBFloat16
                   : seqs == sms ? KvCacheDType::kFp8E4M3
                                 : KvCacheDType::kFp8E5M2,
             .gran = fp8 ? ScaleGranularity::kPerTensor : ScaleGranularity::kNone,
             .head = head,
             .hq = 2 * per_sm,
             .hkv = per_sm};
      for (int i = 0; i < seqs; ++i) c.seqs.push_back({1, len(rng)});
      PreparedCase pc(c, uint32_t(460 + head + seqs));
      pc.be->run(pc.r.args, nullptr);
      ck(cudaDeviceSynchronize());
      const int splits = cuda_flash_planned_splits(*pc.be);
      const int64_t ctas = int64_t(seqs) * per_sm * splits;
      const int ran = cuda_flash_decode_ctas_per_sm(*pc.be);
      compare(pc.P, reference(pc.P), pc.r.out, pc.r.lse,
              c.name + " (splits " + std::to_string(splits) + ", " + std::to_string(ran) +
                  " CTAs per SM)");
      EXPECT_EQ(ran, floored == 2 && cf::decode_floor(ctas, sms, per_sm) ? floored : per_sm)
          << c.name;
      if (seqs == sms && splits == 1) EXPECT_EQ(ran, per_sm) << c.name;  // one full wave
    }
  }
  CudaFlashOptions bad;
  bad.decode_occupancy = 3;
  EXPECT_THROW(make_cuda_flash_backend(bad), InvalidArgument);
}

// Heads 129..256 run decode batches over fp8 caches in the decode form too (64-key tiles, the Q
// fragments re-read from shared memory every tile), where 16-bit caches take a prefill form:
// every feature, both fp8 formats and scale kinds, both dtypes, GQA ratios 1..8 and 6, pages of
// 1..64 keys, two query tokens of a sequence in one 16-row tile, large queries (the fp16 scaling
// of bf16 Q), forced and heuristic splits. Every generation runs v2's decode form, never v3's
// Hopper prefill form.
TEST_F(CudaFlash, Fp8DecodeFormWideHeads) {
  const std::vector<Case> cases = {
      {.name = "fp8 decode e4m3 per-head bf16 d256 window+softcap+alibi+sinks split x3",
       .kv = KvCacheDType::kFp8E4M3,
       .gran = ScaleGranularity::kPerHead,
       .head = 256,
       .hq = 16,
       .hkv = 2,
       .seqs = {{1, 1013}, {1, 0}, {1, 54}, {2, 97}, {1, 1}},
       .wl = 300,
       .softcap = 30.f,
       .alibi = true,
       .sinks = true,
       .force_splits = 3,
       .q_amp = 700.f},
      {.name = "fp8 decode e5m2 per-tensor fp16 d256 GQA 6 page 1",
       .dtype = DType::kFloat16,
       .kv = KvCacheDType::kFp8E5M2,
       .gran = ScaleGranularity::kPerTensor,
       .head = 256,
       .hq = 12,
       .hkv = 2,
       .block = 1,
       .seqs = kAwkwardDecode},
      {.name = "fp8 decode e4m3 per-tensor bf16 d192/128 MQA page 64",
       .kv = KvCacheDType::kFp8E4M3,
       .gran = ScaleGranularity::kPerTensor,
       .head = 192,
       .head_v = 128,
       .hq = 8,
       .hkv = 1,
       .block = 64,
       .seqs = {{1, 4000}, {1, 97}}},
      {.name = "fp8 decode e5m2 per-head bf16 d192 MHA sinks",
       .kv = KvCacheDType::kFp8E5M2,
       .gran = ScaleGranularity::kPerHead,
       .head = 192,
       .hq = 4,
       .hkv = 4,
       .seqs = kAwkwardDecode,
       .sinks = true}};
  uint32_t seed = 23;
  for (const Case& c : cases)
    for (int form : run_case(c, seed++)) EXPECT_EQ(form, cuda_flash::kV2DecodeForm) << c.name;
}

// Speculative decodes (1 + k query tokens a sequence) of 17..32 packed rows at heads up to 128:
// over fp8 caches the decode form takes them as two 16-row blocks; over 16-bit caches a prefill
// form stays. Masks, features, page 1, forced splits, one long sequence among short ones (a split
// count per sequence, two row blocks each).
TEST_F(CudaFlash, Fp8SpeculativeDecodeTakesTheDecodeForm) {
  Seqs long_and_short(15, {8, 64});
  long_and_short.push_back({8, 20000});
  const std::vector<Case> fp8 = {
      {.name = "spec e4m3 per-tensor bf16 d128 32/4 x4 tokens",
       .kv = KvCacheDType::kFp8E4M3,
       .gran = ScaleGranularity::kPerTensor,
       .hq = 32,
       .hkv = 4,
       .seqs = {{4, 1013}, {4, 4}, {3, 54}, {4, 97}, {2, 300}}},
      {.name = "spec e5m2 per-head fp16 d64 GQA 5 x5 tokens window softcap alibi sinks splits 3",
       .dtype = DType::kFloat16,
       .kv = KvCacheDType::kFp8E5M2,
       .gran = ScaleGranularity::kPerHead,
       .head = 64,
       .hq = 10,
       .hkv = 2,
       .seqs = {{5, 700}, {5, 5}, {4, 130}},
       .wl = 100,
       .softcap = 30.f,
       .alibi = true,
       .sinks = true,
       .force_splits = 3},
      {.name = "spec e4m3 per-head bf16 d96 MHA page 1 x32 tokens",
       .kv = KvCacheDType::kFp8E4M3,
       .gran = ScaleGranularity::kPerHead,
       .head = 96,
       .hq = 4,
       .hkv = 4,
       .block = 1,
       .seqs = {{32, 300}, {17, 17}}},
      {.name = "spec e4m3 per-tensor bf16 d128 32/8 x8 tokens, one long sequence",
       .kv = KvCacheDType::kFp8E4M3,
       .gran = ScaleGranularity::kPerTensor,
       .hq = 32,
       .hkv = 8,
       .seqs = long_and_short}};
  uint32_t seed = 700;
  for (const Case& c : fp8) {
    for (int form : run_case(c, seed)) EXPECT_EQ(form, cuda_flash::kV2DecodeForm) << c.name;
    Case b = c;  // the same batch over a cache of the model's dtype: a prefill form
    b.name += " (16-bit cache)";
    b.kv = c.dtype == DType::kFloat16 ? KvCacheDType::kFloat16 : KvCacheDType::kBFloat16;
    b.gran = ScaleGranularity::kNone;
    for (int form : run_case(b, seed)) EXPECT_NE(form, cuda_flash::kV2DecodeForm) << b.name;
    ++seed;
  }
  EXPECT_GT(run_planned(fp8.back(), seed).chunk, 0) << fp8.back().name;
}

// The prefill form stages O in shared memory and stores whole rows: 16 bytes at a time when the
// output rows are 16-byte aligned, 4 otherwise (an output stride of head + 2 elements), and never
// into the per-head padding. Head 64 runs 128-key tiles; GQA groups of 3 make the packed rows of a
// CTA cross tokens unevenly.
TEST_F(CudaFlash, PrefillOutputRowsOfAnyAlignment) {
  for (int pad : {2, 8})
    for (int head : {64, 128}) {
      Case c{
          .name = "prefill bf16 d" + std::to_string(head) + " 6/2 out pad " + std::to_string(pad),
          .head = head,
          .hq = 6,
          .hkv = 2,
          .seqs = {{200, 260}, {129, 129}, {3, 40}, {45, 300}, {0, 9}},
          .out_pad = pad};
      run_case(c, 40 + pad + head);
    }
}
// Pages that hold whole key tiles (page % tile keys == 0, rows packed): the head-128 16-bit
// prefill form copies them from one address per tile (copy_packed_rows), the others row by row
// (heads 80 and 96, whose 10 and 12 chunks a row do not divide the threads, among them); every
// form and tile width (prefill 128-key tiles at head 64, 64-key at 80, 96 and 128, separate K/V
// at 256, dequantized fp8 prefill, decode 64-key bf16 and 128-key fp8 tiles), with last tiles cut
// short at every key length, shuffled pages and splits.
TEST_F(CudaFlash, PagesHoldingWholeTiles) {
  const Seqs mixed = {{1, 1}, {17, 54}, {97, 97}, {64, 300}, {5, 1013}, {1, 257}};
  uint32_t seed = 200;
  for (int page : {128, 256}) {
    const std::string pg = " page " + std::to_string(page);
    for (int head : {64, 80, 96, 128, 256}) {
      Case c{.name = "prefill bf16 d" + std::to_string(head) + pg,
             .head = head,
             .hq = 8,
             .hkv = 2,
             .block = page,
             .seqs = mixed};
      run_case(c, seed++);
    }
    Case fp8{.name = "prefill fp8 e4m3 per-head fp16 d128" + pg,
             .dtype = DType::kFloat16,
             .kv = KvCacheDType::kFp8E4M3,
             .gran = ScaleGranularity::kPerHead,
             .hq = 8,
             .hkv = 2,
             .block = page,
             .seqs = mixed};
    run_case(fp8, seed++);
    for (KvCacheDType kv : {KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3}) {
      Case d{.name = std::string("decode ") + (is_fp8(kv) ? "fp8" : "bf16") + " d128 32/8" + pg,
             .kv = kv,
             .gran = is_fp8(kv) ? ScaleGranularity::kPerTensor : ScaleGranularity::kNone,
             .hq = 32,
             .hkv = 8,
             .block = page,
             .seqs = kAwkwardDecode};
      run_case(d, seed++);
      d.name += " split x3";
      d.seqs = {{1, 1013}, {1, 300}};
      d.force_splits = 3;
      run_case(d, seed++);
    }
  }
}
// Swizzled shared-memory rows that are not a multiple of 128 bytes (tiles.hpp: 192 bytes swizzled
// in 64-byte quarters, 96, 160 and 224 in 32-byte units) in every form that has them: 16-bit heads
// 80 and 96 (prefill with two m-tiles, decode), the fp8 prefill's dequantized tiles of heads 80
// and 96, and fp8 raw rows of heads 96, 160, 192 and 224 (prefill and the decode form; 192/128's
// K), with fp8 head 64's padded rows beside them. Small enough for the sanitizers
// (scripts/gpu_check.sh).
TEST_F(CudaFlash, SharedRowsSwizzledEveryForm) {
  uint32_t seed = 260;
  const Seqs prefill = {{1, 1}, {17, 54}, {97, 97}, {5, 300}};
  const Seqs decode = {{1, 1}, {1, 97}, {1, 300}};
  for (int head : {80, 96}) {
    const std::string d = " d" + std::to_string(head);
    run_case({.name = "prefill bf16" + d + " GQA 4", .head = head, .seqs = prefill}, seed++);
    run_case(
        {.name = "decode bf16" + d + " 32/8", .head = head, .hq = 32, .hkv = 8, .seqs = decode},
        seed++);
    run_case({.name = "prefill fp8 e4m3 per-head bf16" + d,
              .kv = KvCacheDType::kFp8E4M3,
              .gran = ScaleGranularity::kPerHead,
              .head = head,
              .seqs = prefill},
             seed++);
  }
  const std::pair<int, int> fp8_heads[] = {{64, 64},   {96, 96},   {160, 160},
                                           {192, 192}, {192, 128}, {224, 224}};
  for (auto [head, head_v] : fp8_heads) {
    const std::string d = " d" + std::to_string(head) + "/" + std::to_string(head_v);
    Case c{.name = "prefill fp8 e5m2 per-tensor bf16" + d,
           .kv = KvCacheDType::kFp8E5M2,
           .gran = ScaleGranularity::kPerTensor,
           .head = head,
           .head_v = head_v,
           .seqs = prefill};
    run_case(c, seed++);
    c.name = "decode fp8 e5m2 per-tensor bf16" + d + " 32/8";
    c.hq = 32;
    c.hkv = 8;
    c.seqs = decode;
    run_case(c, seed++);
  }
}
// Logits that grow along the keys (K rows scaled up with their position): a row's max keeps rising
// by more than online_softmax's kRescaleSlack from tile to tile, so O and l are rescaled on
// plain-logit rows (the folded-scale path); every kernel form. Without rescaling the
// probabilities overflow: a kernel that never rescales after the first tile fails every case
// here, and passes the ALiBi tests above (v2m review).
TEST_F(CudaFlash, GrowingLogitsRescaleAcrossTiles) {
  uint32_t seed = 300;
  for (int head : {64, 128, 256, 512}) {
    Case c{.name = "growing logits prefill bf16 d" + std::to_string(head),
           .head = head,
           .hq = 4,
           .hkv = 2,
           .seqs = {{64, 1013}, {1, 700}, {33, 33}},
           .k_growth = 0.3f};
    run_case(c, seed++);
    c.name += " non-causal";
    c.causal = false;
    run_case(c, seed++);
  }
  Case d{.name = "growing logits decode bf16 d128 32/8 split x3",
         .hq = 32,
         .hkv = 8,
         .seqs = {{1, 1013}, {1, 300}},
         .force_splits = 3,
         .k_growth = 0.3f};
  run_case(d, seed++);
  d.name = "growing logits decode fp16 d64 16/2";
  d.dtype = DType::kFloat16;
  d.kv = KvCacheDType::kFloat16;
  d.head = 64;
  d.hq = 16;
  d.hkv = 2;
  d.force_splits = 0;
  run_case(d, seed++);
}
// Every (qk, v) head pair of the manifest, both forms (decode-only and mixed batches), 16-bit and
// fp8 caches: what the declaration claims is what runs.
TEST_F(CudaFlash, EveryManifestHeadPair) {
  std::vector<std::pair<int, int>> pairs;
  for (const auto& f : cuda_flash::kFlashManifest)
    if (std::find(pairs.begin(), pairs.end(), std::pair{f.head_qk, f.head_v}) == pairs.end())
      pairs.push_back({f.head_qk, f.head_v});
  uint32_t seed = 100;
  for (auto [qk, v] : pairs) {
    const std::string hs = std::to_string(qk) + "/" + std::to_string(v);
    Case mixed{.name = "bf16 " + hs + " mixed",
               .head = qk,
               .head_v = v,
               .hq = 4,
               .hkv = 2,
               .seqs = {{1, 97}, {37, 150}, {1, 0}}};
    run_case(mixed, seed++);
    Case decode{.name = "fp16 fp8-e4m3 per-head " + hs + " decode",
                .dtype = DType::kFloat16,
                .kv = KvCacheDType::kFp8E4M3,
                .gran = ScaleGranularity::kPerHead,
                .head = qk,
                .head_v = v,
                .hq = 8,
                .hkv = 2,
                .seqs = {{1, 300}, {1, 54}}};
    run_case(decode, seed++);
  }
}

// Heads of 160 and 224 (Zamba2's): 16-bit prefill in the warp-pair form, whose warps split the
// last 32 dims of V 16 / 16 (padded shared rows; forced splits write the workspace's columns
// through the same map); over fp8 caches the decode form, whose Q fragments go back into the Q
// tile in a short last round (10 and 14 chunks over four warps). Masks, features, awkward
// lengths, Zamba2's 48-token blocks, page 1, MHA and GQA, forced splits, both fp8 formats and
// scale granularities.
TEST_F(CudaFlash, Heads160And224) {
  uint32_t seed = 160;
  for (int d : {160, 224}) {
    const std::string hs = "d" + std::to_string(d);
    const std::vector<Case> cases = {
        {.name = "bf16 " + hs + " MHA chunked prefill page 48",
         .head = d,
         .hq = 4,
         .hkv = 4,
         .block = 48,
         .seqs = kAwkwardPrefill},
        {.name = "fp16 " + hs + " GQA 3 window+softcap+sinks page 1",
         .dtype = DType::kFloat16,
         .kv = KvCacheDType::kFloat16,
         .head = d,
         .hq = 6,
         .hkv = 2,
         .block = 1,
         .seqs = {{37, 150}, {1, 97}, {129, 300}},
         .wl = 64,
         .softcap = 30.f,
         .sinks = true},
        {.name = "bf16 " + hs + " non-causal ALiBi split x3",
         .head = d,
         .hq = 4,
         .hkv = 2,
         .seqs = {{5, 1013}, {1, 54}},
         .causal = false,
         .alibi = true,
         .force_splits = 3},
        {.name = "bf16 " + hs + " decode batch page 48",
         .head = d,
         .hq = 8,
         .hkv = 8,
         .block = 48,
         .seqs = kAwkwardDecode},
        {.name = "fp8 e4m3 per-head bf16 " + hs + " decode window+softcap+alibi+sinks split x3",
         .kv = KvCacheDType::kFp8E4M3,
         .gran = ScaleGranularity::kPerHead,
         .head = d,
         .hq = 8,
         .hkv = 2,
         .seqs = {{1, 1013}, {1, 0}, {1, 54}, {2, 97}, {1, 1}},
         .wl = 300,
         .softcap = 30.f,
         .alibi = true,
         .sinks = true,
         .force_splits = 3,
         .q_amp = 700.f},
        {.name = "fp8 e5m2 per-tensor fp16 " + hs + " MHA decode page 48",
         .dtype = DType::kFloat16,
         .kv = KvCacheDType::kFp8E5M2,
         .gran = ScaleGranularity::kPerTensor,
         .head = d,
         .hq = 4,
         .hkv = 4,
         .block = 48,
         .seqs = kAwkwardDecode},
        {.name = "fp8 e4m3 per-tensor bf16 " + hs + " prefill page 16",
         .kv = KvCacheDType::kFp8E4M3,
         .gran = ScaleGranularity::kPerTensor,
         .head = d,
         .hq = 4,
         .hkv = 2,
         .seqs = kAwkwardPrefill}};
    for (const Case& c : cases) run_case(c, seed++);
  }
}

// v3's Hopper prefill form (SM90): every head, dtype and cache kind it covers (16-bit, fp8 e4m3
// and e5m2 with per-head and per-tensor scales), the features, masks, awkward lengths, page sizes
// 1..128, GQA ratios 1..8 and non-powers of two, forced splits and unaligned output rows; each
// case also runs v2 (run_case) and must have taken the Hopper form under v3. The head pairs are
// the manifest's under tiles.hpp hopper_prefill_head (192/128 included: V tiles of their own
// width, fp8 V rows through K's raw lanes); heads laid out wider than themselves (80, 96, 160,
// 224; hopper_layout_head) run the bf16 model only (their code differs from the others' by head
// only; the conformance suite runs fp16 there).
TEST_F(CudaFlash, HopperPrefillForm) {
  if (device_cc() != 90) GTEST_SKIP() << "the Hopper form runs on SM90 only";
  const Seqs long_seqs = {{300, 300}, {129, 1013}, {1, 64}, {200, 2000}};
  std::vector<Case> cases;
  for (auto [head, head_v] : cuda_flash::kFlashHeadPairs) {
    if (!cuda_flash::hopper_prefill_head(head, head_v)) continue;
    for (DType dt : {DType::kBFloat16, DType::kFloat16}) {
      if (dt == DType::kFloat16 && (head % 64 != 0 || head_v % 64 != 0)) continue;
      const KvCacheDType kv =
          dt == DType::kBFloat16 ? KvCacheDType::kBFloat16 : KvCacheDType::kFloat16;
      const std::string n = "v3 d" + std::to_string(head) +
                            (head_v == head ? "" : "/" + std::to_string(head_v)) +
                            (dt == DType::kFloat16 ? " fp16" : " bf16");
      cases.push_back({.name = n + " causal awkward",
                       .dtype = dt,
                       .kv = kv,
                       .head = head,
                       .head_v = head_v,
                       .hq = 8,
                       .hkv = 2,
                       .block = 16,
                       .seqs = kAwkwardPrefill});
      cases.push_back({.name = n + " non-causal GQA 5",
                       .dtype = dt,
                       .kv = kv,
                       .head = head,
                       .head_v = head_v,
                       .hq = 10,
                       .hkv = 2,
                       .block = 64,
                       .seqs = long_seqs,
                       .causal = false});
      cases.push_back({.name = n + " window softcap alibi sinks",
                       .dtype = dt,
                       .kv = kv,
                       .head = head,
                       .head_v = head_v,
                       .hq = 12,
                       .hkv = 4,
                       .block = 128,
                       .seqs = long_seqs,
                       .wl = 100,
                       .softcap = 30.f,
                       .alibi = true,
                       .sinks = true});
      cases.push_back({.name = n + " fp8-e4m3 per-head causal awkward",
                       .dtype = dt,
                       .kv = KvCacheDType::kFp8E4M3,
                       .gran = ScaleGranularity::kPerHead,
                       .head = head,
                       .head_v = head_v,
                       .hq = 8,
                       .hkv = 2,
                       .block = 16,
                       .seqs = kAwkwardPrefill});
      cases.push_back({.name = n + " fp8-e5m2 per-tensor window softcap alibi sinks GQA 3",
                       .dtype = dt,
                       .kv = KvCacheDType::kFp8E5M2,
                       .gran = ScaleGranularity::kPerTensor,
                       .head = head,
                       .head_v = head_v,
                       .hq = 6,
                       .hkv = 2,
                       .block = 128,
                       .seqs = long_seqs,
                       .wl = 100,
                       .softcap = 30.f,
                       .alibi = true,
                       .sinks = true});
    }
  }
  cases.push_back({.name = "v3 d128 fp8-e4m3 non-causal forced splits page 1",
                   .kv = KvCacheDType::kFp8E4M3,
                   .gran = ScaleGranularity::kPerTensor,
                   .head = 128,
                   .hq = 4,
                   .hkv = 4,
                   .block = 1,
                   .seqs = long_seqs,
                   .causal = false,
                   .force_splits = 3});
  cases.push_back({.name = "v3 d64 fp8-e4m3 growing logits",
                   .kv = KvCacheDType::kFp8E4M3,
                   .gran = ScaleGranularity::kPerHead,
                   .head = 64,
                   .hq = 8,
                   .hkv = 8,
                   .block = 16,
                   .seqs = {{300, 2000}},
                   .k_growth = 0.004f});
  // A bf16 model's Q rows go to fp16 for the fp8 form's MMAs: magnitudes beyond fp16's range
  // are scaled by a power of two that the logits' scale takes back (with the softmax scale
  // divided by q_amp, a factor left out would change the probabilities).
  for (float amp : {3e5f, 1e-6f})
    cases.push_back(
        {.name = std::string("v3 d128 bf16 fp8-e4m3 ") + (amp > 1 ? "huge" : "tiny") + " Q",
         .kv = KvCacheDType::kFp8E4M3,
         .gran = ScaleGranularity::kPerHead,
         .head = 128,
         .hq = 8,
         .hkv = 2,
         .block = 16,
         .seqs = {{97, 300}, {5, 1013}},
         .q_amp = amp});
  cases.push_back({.name = "v3 d128 page 1 MHA",
                   .head = 128,
                   .hq = 4,
                   .hkv = 4,
                   .block = 1,
                   .seqs = {{97, 97}, {64, 300}}});
  cases.push_back({.name = "v3 d128 GQA 8 two-sided window",
                   .head = 128,
                   .hq = 16,
                   .hkv = 2,
                   .block = 32,
                   .seqs = long_seqs,
                   .causal = false,
                   .wl = 37,
                   .wr = 11});
  cases.push_back({.name = "v3 d64 forced splits with sinks",
                   .head = 64,
                   .hq = 6,
                   .hkv = 2,
                   .block = 16,
                   .seqs = long_seqs,
                   .sinks = true,
                   .force_splits = 5});
  cases.push_back({.name = "v3 d192/128 forced splits unaligned out rows",
                   .head = 192,
                   .head_v = 128,
                   .hq = 10,
                   .hkv = 2,
                   .block = 64,
                   .seqs = long_seqs,
                   .causal = false,
                   .force_splits = 3,
                   .out_pad = 2});
  cases.push_back({.name = "v3 d96 forced splits unaligned out rows",
                   .head = 96,
                   .hq = 3,
                   .hkv = 1,
                   .block = 16,
                   .seqs = {{129, 1013}, {5, 7}},
                   .force_splits = 3,
                   .out_pad = 2});
  cases.push_back({.name = "v3 d224 fp8-e4m3 forced splits page 1",
                   .kv = KvCacheDType::kFp8E4M3,
                   .gran = ScaleGranularity::kPerTensor,
                   .head = 224,
                   .hq = 4,
                   .hkv = 2,
                   .block = 1,
                   .seqs = long_seqs,
                   .causal = false,
                   .force_splits = 3});
  cases.push_back({.name = "v3 d256 unaligned out rows",
                   .head = 256,
                   .hq = 3,
                   .hkv = 1,
                   .block = 16,
                   .seqs = {{129, 1013}, {5, 7}},
                   .out_pad = 2});
  cases.push_back({.name = "v3 d128 growing logits",
                   .head = 128,
                   .hq = 8,
                   .hkv = 8,
                   .block = 16,
                   .seqs = {{300, 2000}},
                   .k_growth = 0.004f});
  const size_t short64 = cases.size();  // head 64 over short sequences: v2's form under v3 too
  cases.push_back(
      {.name = "v3 d64 short keys", .head = 64, .hq = 8, .hkv = 2, .block = 16, .seqs = long_seqs});
  cases.push_back({.name = "v3 d64 non-causal short keys",
                   .head = 64,
                   .hq = 4,
                   .hkv = 4,
                   .block = 16,
                   .seqs = {{512, 512}, {129, 1013}},
                   .causal = false});
  cases.push_back({.name = "v3 d64 non-causal from 1k keys",
                   .head = 64,
                   .hq = 4,
                   .hkv = 4,
                   .block = 16,
                   .seqs = {{300, 300}, {1024, 1024}, {0, 0}, {77, 77}},
                   .causal = false});
  cases.push_back({.name = "v3 d64 window over long keys (v2 form)",
                   .head = 64,
                   .hq = 8,
                   .hkv = 2,
                   .block = 16,
                   .seqs = {{300, 5000}, {64, 4200}},
                   .wl = 255});
  cases.push_back({.name = "v3 d64 window of 1.2k keys over 5k (Hopper form by rule)",
                   .head = 64,
                   .hq = 8,
                   .hkv = 2,
                   .block = 16,
                   .seqs = {{300, 5000}, {64, 4200}},
                   .wl = 1200});
  uint32_t seed = 900;
  for (size_t i = 0; i < cases.size(); ++i) {
    Case c = cases[i];
    // Head 64 takes the form from the keys tiles.hpp hopper_prefill_takes asks a CTA to visit;
    // the cases named "short keys" or "(v2 form)" stay below. The other head-64 window cases ask
    // for the form at any length, but for the one that the rule gives it.
    const bool v2_form = c.name.ends_with("short keys") || c.name.ends_with("(v2 form)");
    if (c.head == 64 && !v2_form && c.causal)
      c.seqs.push_back({40, cuda_flash::kHopperHead64MinKeysCausal + 3});
    const bool by_rule = c.name.ends_with("(Hopper form by rule)");
    if (c.head == 64 && !v2_form && !by_rule && c.wl >= 0) c.hopper_any_length = true;
    int max_k = 0;
    for (auto [q, k] : c.seqs) max_k = std::max(max_k, k);
    const int want = c.hopper_any_length || cuda_flash::hopper_prefill_takes(
                                                c.head, c.head_v ? c.head_v : c.head, max_k,
                                                c.hq / c.hkv, c.causal, c.wl, c.wr)
                         ? cuda_flash::kHopperPrefillForm
                         : 0;
    EXPECT_EQ(want, v2_form ? 0 : cuda_flash::kHopperPrefillForm) << c.name;
    const std::vector<int> forms = run_case(c, seed++);
    ASSERT_EQ(forms.size(), 2u) << c.name;
    EXPECT_EQ(forms[0], 0) << c.name << ": v2 ran a v3 form";
    EXPECT_EQ(forms[1], want) << c.name << ": v3's form";
  }
  // The conformance suite's CUDA_FLASH entry asks for the form at every length (short head-64
  // batches included): it must then run it.
  Case any = cases[short64];
  any.name += " (hopper_any_length)";
  any.hopper_any_length = true;
  const std::vector<int> forms = run_case(any, seed);
  ASSERT_EQ(forms.size(), 2u);
  EXPECT_EQ(forms[0], 0) << "generation 2 ignores hopper_any_length";
  EXPECT_EQ(forms[1], cuda_flash::kHopperPrefillForm);
}

// The Hopper form at every head pair it covers (the manifest's pairs under tiles.hpp
// hopper_prefill_head) over a 16-bit and an fp8 cache in a few tiles: small enough to run under
// racecheck and synccheck in seconds (the stage barriers, the producer's raw ring and its
// conversion into the stages, the copies of heads laid out wider than themselves), where
// HopperPrefillForm takes minutes.
TEST_F(CudaFlash, HopperFormSmall) {
  if (device_cc() != 90) GTEST_SKIP() << "the Hopper form runs on SM90 only";
  uint32_t seed = 950;
  for (auto [head, head_v] : cuda_flash::kFlashHeadPairs) {
    if (!cuda_flash::hopper_prefill_head(head, head_v)) continue;
    for (KvCacheDType kv : {KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3}) {
      Case c{.name = "v3 d" + std::to_string(head) + "/" + std::to_string(head_v) + " " +
                     std::string(to_string(kv)) + " small",
             .kv = kv,
             .gran = kv == KvCacheDType::kFp8E4M3 ? ScaleGranularity::kPerHead
                                                  : ScaleGranularity::kNone,
             .head = head,
             .head_v = head_v,
             .hq = 4,
             .hkv = 2,
             .block = 16,
             .seqs = {{130, 300}, {3, 77}},
             .hopper_any_length = true};
      const std::vector<int> forms = run_case(c, seed++);
      ASSERT_EQ(forms.size(), 2u) << c.name;
      EXPECT_EQ(forms[1], cuda_flash::kHopperPrefillForm) << c.name << ": v3's form";
    }
  }
}

// Head 512 runs the wide form (flash_wide.cuh: the warps split the head dimension and exchange
// partial scores): 32-row CTAs with a partial last one, decode rows that skip the second m-tile
// and a group of 24 that fills part of it, key lengths off the 16-key tile grid, page sizes 1 and
// 16, every feature, fp8 with per-head and per-tensor scales, forced and heuristic split-KV.
TEST_F(CudaFlash, WideHead512) {
  Case prefill{.name = "wide prefill bf16 d512 8/2",
               .head = 512,
               .hq = 8,
               .hkv = 2,
               .seqs = {{40, 200}, {1, 97}, {70, 70}, {1, 0}, {9, 3}}};
  run_case(prefill, 30);
  Case decode{.name = "wide decode fp16 d512 24/1 page 1 window+softcap+alibi+sinks",
              .dtype = DType::kFloat16,
              .kv = KvCacheDType::kFloat16,
              .head = 512,
              .hq = 24,
              .hkv = 1,
              .block = 1,
              .seqs = {{1, 333}, {1, 0}, {1, 17}, {1, 1}},
              .wl = 100,
              .softcap = 20.f,
              .alibi = true,
              .sinks = true};
  run_case(decode, 31);
  Case features{.name = "wide prefill bf16 d512 8/4 window+softcap+alibi+sinks",
                .head = 512,
                .hq = 8,
                .hkv = 4,
                .seqs = {{50, 300}, {1, 54}, {33, 33}, {2, 0}},
                .wl = 40,
                .softcap = 30.f,
                .alibi = true,
                .sinks = true,
                .out_pad = 8};
  run_case(features, 32);
  Case fp8{.name = "wide fp8 e4m3 per-head bf16 d512 16/2 split x3",
           .kv = KvCacheDType::kFp8E4M3,
           .gran = ScaleGranularity::kPerHead,
           .head = 512,
           .hq = 16,
           .hkv = 2,
           .seqs = {{1, 700}, {6, 333}, {1, 0}, {1, 5}},
           .sinks = true,
           .force_splits = 3};
  run_case(fp8, 33);
  Case e5m2{.name = "wide fp8 e5m2 per-tensor fp16 d512 non-causal window 9/4",
            .dtype = DType::kFloat16,
            .kv = KvCacheDType::kFp8E5M2,
            .gran = ScaleGranularity::kPerTensor,
            .head = 512,
            .hq = 6,
            .hkv = 3,
            .block = 1,
            .seqs = {{45, 45}, {20, 91}},
            .causal = false,
            .wl = 9,
            .wr = 4};
  run_case(e5m2, 34);
  // q_len > k_len: the first causal rows see nothing (out 0, lse = sink or -inf).
  Case splits{.name = "wide split-KV x5 sinks bf16 d512",
              .head = 512,
              .hq = 4,
              .hkv = 2,
              .seqs = {{20, 700}, {10, 4}, {1, 1013}, {3, 0}},
              .sinks = true,
              .force_splits = 5};
  run_case(splits, 35);
  Case heuristic{.name = "wide one long decode fp16 d512 (heuristic splits)",
                 .dtype = DType::kFloat16,
                 .kv = KvCacheDType::kFloat16,
                 .head = 512,
                 .hq = 8,
                 .hkv = 1,
                 .seqs = {{1, 3001}}};
  run_case(heuristic, 36);
}

// CUDA_MLA over a latent cache, V read out of the K tile (576 / 512), in the form the device
// picks (on SM90 the Hopper form: 64-row CTAs; elsewhere the wide form: 32-row CTAs) and, for
// the larger cases, in the wide form forced. The heads of a token are the rows of one KV head's
// group.
TEST_F(CudaFlash, MlaLatentDecode) {
  const Case base{.head = 576, .head_v = 512, .hkv = 1, .mla = true};
  Case c128 = base;
  c128.name = "mla bf16 128 heads page 64";
  c128.hq = 128;
  c128.block = 64;
  c128.seqs = kAwkwardDecode;
  run_case(c128, 50);
  c128.name = "mla bf16 128 heads page 64, the wide form";
  c128.mla_form = cuda_mla::kWideForm;
  run_case(c128, 50);
  Case fp8 = base;
  fp8.name = "mla fp8 e4m3 per-tensor fp16 16 heads split x7";
  fp8.dtype = DType::kFloat16;
  fp8.kv = KvCacheDType::kFp8E4M3;
  fp8.gran = ScaleGranularity::kPerTensor;
  fp8.hq = 16;
  fp8.seqs = {{1, 1013}, {1, 0}, {1, 97}, {1, 1}};
  fp8.force_splits = 7;
  run_case(fp8, 51);
  Case e5m2 = base;
  e5m2.name = "mla fp8 e5m2 bf16 24 heads page 32 (heuristic splits)";
  e5m2.kv = KvCacheDType::kFp8E5M2;
  e5m2.gran = ScaleGranularity::kPerTensor;
  e5m2.hq = 24;
  e5m2.block = 32;
  e5m2.seqs = {{1, 3001}};
  run_case(e5m2, 52);
  Case fp8_64 = base;
  fp8_64.name = "mla fp8 e4m3 bf16 64 heads split x5";
  fp8_64.kv = KvCacheDType::kFp8E4M3;
  fp8_64.gran = ScaleGranularity::kPerTensor;
  fp8_64.hq = 64;
  fp8_64.block = 64;
  fp8_64.seqs = {{1, 1013}, {2, 300}, {1, 0}, {1, 65}};
  fp8_64.force_splits = 5;
  run_case(fp8_64, 56);
  fp8_64.name = "mla fp8 e4m3 bf16 64 heads split x5, the wide form";
  fp8_64.mla_form = cuda_mla::kWideForm;
  run_case(fp8_64, 56);
  Case e5m2_128 = base;
  e5m2_128.name = "mla fp8 e5m2 fp16 128 heads page 16, chunks of 3 tokens";
  e5m2_128.dtype = DType::kFloat16;
  e5m2_128.kv = KvCacheDType::kFp8E5M2;
  e5m2_128.gran = ScaleGranularity::kPerTensor;
  e5m2_128.hq = 128;
  e5m2_128.seqs = {{3, 200}, {1, 1}, {3, 2}};
  run_case(e5m2_128, 57);
  // Chunked prefill over the latent cache (causal, bottom-right): rows of several tokens.
  Case chunk = base;
  chunk.name = "mla chunked prefill fp16 16 heads";
  chunk.dtype = DType::kFloat16;
  chunk.kv = KvCacheDType::kFloat16;
  chunk.hq = 16;
  chunk.block = 16;
  chunk.seqs = {{5, 97}, {17, 300}, {1, 1}, {3, 0}};
  chunk.out_pad = 8;
  run_case(chunk, 53);
}

// CUDA_MLA's Hopper form under a ragged plan (a split count per sequence): 128 heads (two row
// blocks per token) over bf16, 16 over fp8 e4m3, one long sequence among short ones.
TEST_F(CudaFlash, MlaRaggedDecode) {
  if (device_cc() != 90) GTEST_SKIP() << "the Hopper form runs on SM90 only";
  Seqs seqs = {{1, 8000}};
  for (int i = 0; i < 40; ++i) seqs.push_back({1, 64 + 21 * i});
  seqs.push_back({1, 0});
  const Case base{.head = 576, .head_v = 512, .hkv = 1, .block = 64, .seqs = seqs, .mla = true};
  Case c128 = base;
  c128.name = "mla ragged bf16 128 heads";
  c128.hq = 128;
  Case fp8 = base;
  fp8.name = "mla ragged fp8 e4m3 16 heads";
  fp8.kv = KvCacheDType::kFp8E4M3;
  fp8.gran = ScaleGranularity::kPerTensor;
  fp8.hq = 16;
  for (const Case& c : {c128, fp8}) {
    const PlannedRun run = run_planned(c, 58);
    EXPECT_EQ(run.form, cuda_mla::kHopperForm) << c.name;
    EXPECT_GT(run.chunk, 0) << c.name << ": expected a split count per sequence";
  }
}

// The latent cache has no V tensor: CUDA_MLA refuses a view with one and CUDA_FLASH one without.
TEST_F(CudaFlash, MlaAndFlashRefuseTheOtherCacheForm) {
  std::mt19937 rng(54);
  Problem P;
  build(P, Case{.name = "d128", .hq = 4, .hkv = 1, .seqs = {{1, 10}}}, rng);
  auto mla = make_cuda_mla_backend();
  DeviceRun r;
  prepare_run(P, *mla, r);
  try {
    mla->run(r.args, nullptr);
    ADD_FAILURE() << "CUDA_MLA ran a cache with a V tensor";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no V tensor"), std::string::npos) << e.what();
  }
  auto flash = make_cuda_flash_backend();
  prepare_run(P, *flash, r);
  r.args.kv.v = nullptr;
  EXPECT_THROW(flash->run(r.args, nullptr), InvalidArgument);
}

// The Hopper form takes plain logits on SM90 only: forcing it with a soft cap is refused by the
// plan, never run with the cap ignored.
TEST_F(CudaFlash, MlaHopperFormRefusesWhatItCannotRun) {
  Case c{.name = "mla softcap",
         .head = 576,
         .head_v = 512,
         .hq = 64,
         .hkv = 1,
         .seqs = {{1, 40}},
         .softcap = 30.f,
         .mla = true,
         .mla_form = cuda_mla::kHopperForm};
  EXPECT_THROW(PreparedCase(c, 58), Unsupported);
  // A latent tensor past what the kernels address (row offsets in 16-byte units in 32 bits) is
  // refused before any launch.
  c.softcap = 0.f;
  c.mla_form = 0;
  PreparedCase big(c, 59);
  big.r.args.kv.num_blocks = 1 << 30;
  EXPECT_THROW(big.be->run(big.r.args, nullptr), Unsupported);
}

// One MLA decode step with splits captured in a graph and replayed twice over poisoned outputs:
// 16 heads in the wide form, 128 in the form the device picks (on SM90, the Hopper form).
TEST_F(CudaFlash, MlaGraphCaptureDecodeSplits) {
  for (int hq : {16, 128}) {
    Case c{.name = "mla graph decode " + std::to_string(hq) + " heads",
           .head = 576,
           .head_v = 512,
           .hq = hq,
           .hkv = 1,
           .block = 64,
           .seqs = {{1, 2000}, {1, 700}, {1, 0}},
           .force_splits = 5,
           .mla = true,
           .mla_form = hq == 16 ? 1 : 0};
    PreparedCase pc(c, 55);
    ASSERT_EQ(cuda_flash_planned_splits(*pc.be), 5);
    if (hq == 16) EXPECT_EQ(cuda_flash_planned_form(*pc.be), cuda_mla::kWideForm);
    CapturedRun g(*pc.be, pc.r.args);
    const Outputs ref = reference(pc.P);
    for (int replay = 1; replay <= 2; ++replay) {
      pc.r.poison_out();
      g.replay();
      compare(pc.P, ref, pc.r.out, pc.r.lse, c.name + " replay " + std::to_string(replay));
    }
  }
}

// CUDA_MLA's chunked-prefill steps: decodes (up to four of the form's row blocks a sequence) and
// chunks run as two parts under both forms, over 16-bit and fp8 latent caches; other orders stay
// one part.
TEST_F(CudaFlash, MlaMixedBatchesRunAsTwoParts) {
  struct Mixed {
    Case c;
    int parts;
  };
  const Case base{.head = 576, .head_v = 512, .hkv = 1, .block = 64, .mla = true};
  std::vector<Mixed> cases;
  Case c = base;
  c.name = "mla decodes first bf16 128 heads";
  c.hq = 128;
  c.seqs = {{1, 1013}, {1, 0}, {1, 300}, {0, 20}, {40, 600}};
  cases.push_back({c, 2});
  c.name += ", the wide form";
  c.mla_form = cuda_mla::kWideForm;
  cases.push_back({c, 2});
  c.name = "mla decodes first bf16 128 heads, parts in turn";
  c.mla_form = 0;
  c.concurrent_parts = false;
  cases.push_back({c, 2});
  c.concurrent_parts = true;
  c.name = "mla decodes first bf16 128 heads, planned as one part (one_part)";
  c.mla_form = 0;
  c.one_part = true;
  cases.push_back({c, 1});
  c = base;
  c.name = "mla chunk first fp8 e4m3 16 heads page 16 splits 3";
  c.kv = KvCacheDType::kFp8E4M3;
  c.gran = ScaleGranularity::kPerTensor;
  c.hq = 16;
  c.block = 16;
  c.seqs = {{100, 1013}, {1, 97}, {1, 1}, {2, 500}};
  c.force_splits = 3;
  cases.push_back({c, 2});
  c = base;
  c.name = "mla decodes first fp16 fp8 e5m2 64 heads, one long decode";
  c.dtype = DType::kFloat16;
  c.kv = KvCacheDType::kFp8E5M2;
  c.gran = ScaleGranularity::kPerTensor;
  c.hq = 64;
  c.seqs = Seqs(30, {1, 64});
  c.seqs[5] = {1, 9000};
  c.seqs.push_back({17, 200});
  cases.push_back({c, 2});
  c = base;
  c.name = "mla decode, chunk, decode: one part";
  c.hq = 128;
  c.seqs = {{1, 97}, {9, 200}, {1, 54}};
  cases.push_back({c, 1});
  uint32_t seed = 320;
  for (const Mixed& m : cases) {
    PreparedCase pc(m.c, seed++);
    EXPECT_EQ(cuda_flash_planned_parts(*pc.be), m.parts) << m.c.name;
    pc.be->run(pc.r.args, nullptr);
    ck(cudaDeviceSynchronize());
    compare(pc.P, reference(pc.P), pc.r.out, pc.r.lse,
            m.c.name + " (form " + std::to_string(cuda_flash_planned_form(*pc.be)) + ", splits " +
                std::to_string(cuda_flash_planned_splits(*pc.be)) + ")");
  }
}

// Chunked local attention (Llama 4; docs/semantics.md §4), through the decode form's kChunk
// kernels (decode batches at head 128) and as chunk pieces (tiles.hpp chunk_piece; every case
// also with CudaFlashOptions::chunk_pieces): long decodes whose chunk starts far into the cache
// with the past chunks' table entries pointing at an unwritten NaN block, forced and ragged
// splits, a 3-token row across a boundary, prefill rows across chunk boundaries (v2's form, v3's
// on SM90), rows before key 0, a window inside the chunk, non-causal rows, the logit features,
// head 256, and an fp8 cache in the fp8 decode form.
TEST_F(CudaFlash, ChunkedLocalAttention) {
  const std::vector<Case> cases = {
      {.name = "chunk 8192: 1 x 20000 decode 40/8 (Llama 4 Scout's heads)",
       .hq = 40,
       .hkv = 8,
       .seqs = {{1, 20000}},
       .chunk = 8192,
       .stale_past_chunks = true},
      {.name = "chunk 1024, page 64: decodes and a 3-token row across a boundary, forced splits",
       .hq = 8,
       .hkv = 2,
       .block = 64,
       .seqs = {{1, 5000}, {3, 2049}, {1, 1024}, {1, 1025}},
       .chunk = 1024,
       .stale_past_chunks = true,
       .force_splits = 5},
      {.name = "chunk 4096: a ragged decode batch",
       .hq = 32,
       .hkv = 4,
       .seqs = {{1, 12000}, {1, 100}, {1, 4500}, {1, 8193}, {1, 4096}, {1, 7}},
       .chunk = 4096,
       .stale_past_chunks = true},
      {.name = "chunk 96: chunked prefill across chunk boundaries, rows before key 0",
       .hq = 8,
       .hkv = 2,
       .seqs = {{300, 300}, {130, 450}, {1, 97}, {4, 2}, {0, 50}},
       .chunk = 96},
      {.name = "chunk 208 with a window of 64: the narrower bound wins per row",
       .dtype = DType::kFloat16,
       .kv = KvCacheDType::kFloat16,
       .head = 64,
       .hq = 4,
       .hkv = 4,
       .seqs = {{256, 700}, {1, 401}},
       .wl = 63,
       .chunk = 208},
      {.name = "chunk 64: non-causal rows see their whole chunk",
       .hq = 4,
       .hkv = 2,
       .seqs = {{20, 300}, {70, 150}, {10, 5}},
       .causal = false,
       .chunk = 64},
      {.name = "chunk 16: non-causal decode-sized rows (pieces: their chunk bounds both sides)",
       .hq = 4,
       .hkv = 2,
       .seqs = {{1, 300}, {5, 150}, {3, 37}},
       .causal = false,
       .chunk = 16},
      {.name = "chunk 128: ALiBi, sinks and softcap",
       .hq = 8,
       .hkv = 2,
       .seqs = {{40, 500}, {1, 777}},
       .chunk = 128,
       .softcap = 20.f,
       .alibi = true,
       .sinks = true},
      {.name = "chunk 256 at head 256",
       .head = 256,
       .hq = 8,
       .hkv = 2,
       .seqs = {{200, 600}, {1, 1000}},
       .chunk = 256},
      {.name = "chunk 512: fp8 e4m3 decode",
       .kv = KvCacheDType::kFp8E4M3,
       .gran = ScaleGranularity::kPerTensor,
       .hq = 32,
       .hkv = 4,
       .seqs = {{1, 3000}, {1, 513}, {1, 1024}},
       .chunk = 512,
       .stale_past_chunks = true},
  };
  for (size_t i = 0; i < cases.size(); ++i)
    for (bool pieces : {false, true}) {
      Case c = cases[i];
      c.chunk_pieces = pieces;
      if (pieces) c.name += " (as pieces)";
      run_case(c, 90 + int(i));
    }
}

// As pieces, a chunk that is not a whole number of blocks is refused at run() (the KV plan never
// gives one: kv_plan_test), before anything is written; the decode form's kChunk kernels take
// it. A chunked layer's decode graph replays over a longer cache after a replan, through the
// kChunk kernels and as pieces (whose table rows hold a whole chunk).
TEST_F(CudaFlash, ChunkedLocalRunChecksAndGraphReplay) {
  Case c{.name = "chunk 100, page 16", .hq = 8, .hkv = 2, .seqs = {{1, 300}}, .chunk = 100};
  {
    c.chunk_pieces = true;
    PreparedCase pc(c, 31);
    try {
      pc.be->run(pc.r.args, nullptr);
      ADD_FAILURE() << "accepted a chunk of 100 over pages of 16";
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find("is not a multiple of the block size 16"),
                std::string::npos)
          << e.what();
    }
    ck(cudaDeviceSynchronize());
    for (uint16_t b : download<uint16_t>(pc.r.out, pc.r.out.n / 2))
      ASSERT_EQ(b, 0x7fff) << "a rejected run wrote its output";
  }
  c.chunk_pieces = false;
  run_case(c, 31);
  for (bool pieces : {false, true}) {
    // The cache holds the second step's keys; the first step sees fewer of them.
    c = {.name = "chunk 256 decode graph",
         .hq = 8,
         .hkv = 2,
         .seqs = {{1, 310}, {1, 2049}, {1, 767}},
         .chunk = 256,
         .chunk_pieces = pieces};
    PreparedCase pc(c, 32);
    Problem& P = pc.P;
    auto step = [&](std::vector<int32_t> used) {
      P.used = used;
      P.c.seqs = {{1, used[0]}, {1, used[1]}, {1, used[2]}};
      pc.be->plan(host_batch(P), layer_of(P, true));
      ASSERT_LE(pc.be->workspace_bytes(), pc.r.ws.n);
      ck(cudaMemcpy(P.dused.p, P.used.data(), P.used.size() * 4, cudaMemcpyHostToDevice));
      pc.r.poison_out();
    };
    const std::string how = pieces ? " (as pieces)" : " (kChunk kernels)";
    step({300, 2000, 700});
    CapturedRun g(*pc.be, pc.r.args);
    g.replay();
    compare(P, reference(P), pc.r.out, pc.r.lse, "chunked graph replay 1" + how);
    // Next step: each sequence some keys on (2000 -> 2049 crosses into the chunk from 2048 on);
    // replan, update the metadata, replay the same graph.
    step({310, 2049, 767});
    g.replay();
    compare(P, reference(P), pc.r.out, pc.r.lse,
            "chunked graph replay 2 (replanned, longer)" + how);
  }
}

TEST_F(CudaFlash, HeuristicSplitsLongDecode) {
  Case c{.name = "one long decode (heuristic splits)", .hq = 8, .hkv = 1, .seqs = {{1, 5000}}};
  run_case(c, 10);
}

// The plan keeps two split counts and run() settles on one with the cache it is given: pages
// that hold whole tiles take kLoneCtaTilesPaged's count, over 16-bit caches and, at heads 128 and
// 256, fp8 ones (fp8_decode_paged_count: 128-key fp8 tiles at head 128, 64-key at 256). On a
// 132-SM GPU 1x32k 32/4 then runs 32 splits where a page holds whole tiles, else 64. A batch
// that says earlier_rows_settled on SM90 keeps 64 at heads up to 128, whose 256 CTAs copy their
// first tiles early (tiles.hpp early_copies_pay); head 256 keeps its paged count. Each run is
// checked against the reference.
TEST_F(CudaFlash, DecodeSplitsSettledByPageSize) {
  struct Row {
    bool fp8;
    int head, block, splits;
    bool settled = false;
  };
  const bool pdl = pdl_on();
  const int early = pdl ? 64 : 32;  // the count over whole-tile pages of a settled batch
  const Row rows[] = {
      {false, 128, 16, 64},          {false, 128, 64, 32},          {true, 256, 16, 64},
      {true, 256, 64, 32},           {true, 128, 64, 64},           {true, 128, 128, 32},
      {false, 128, 64, early, true}, {true, 128, 128, early, true}, {true, 256, 64, 32, true}};
  int sms = 0;
  ck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int seed = 40;
  for (const Row& row : rows) {
    const std::string name = std::string(row.fp8 ? "fp8 e4m3" : "bf16") + " head " +
                             std::to_string(row.head) + " 1x32k 32/4 page " +
                             std::to_string(row.block) + (row.settled ? " settled" : "");
    Case c{.name = name,
           .kv = row.fp8 ? KvCacheDType::kFp8E4M3 : KvCacheDType::kBFloat16,
           .gran = row.fp8 ? ScaleGranularity::kPerTensor : ScaleGranularity::kNone,
           .head = row.head,
           .hq = 32,
           .hkv = 4,
           .block = row.block,
           .seqs = {{1, 32768}},
           .settled = row.settled};
    const int splits = run_planned(c, seed++).splits;
    if (sms == 132) EXPECT_EQ(splits, row.splits) << name;
  }
}

// The Hopper form runs one CTA per SM (its registers), though head 64's shared memory would
// allow two: 128 CTAs of 16 key tiles fill a 132-SM H200 in one wave, so the plan must not split
// them (counting two slots per SM it chose two splits: a second wave and a combine).
TEST_F(CudaFlash, HopperHead64SplitsCountOneCtaPerSm) {
  if (device_cc() != 90) GTEST_SKIP() << "the Hopper form runs on SM90 only";
  Case c{.name = "v3 d64 512 x 2048, 128 CTAs",
         .head = 64,
         .hq = 32,
         .hkv = 8,
         .block = 64,
         .seqs = {{512, 2048}},
         .generation = 3,
         .hopper_any_length = true};
  PreparedCase pc(c, 45);
  pc.be->run(pc.r.args, nullptr);
  ck(cudaDeviceSynchronize());
  ASSERT_EQ(cuda_flash_planned_form(*pc.be), cuda_flash::kHopperPrefillForm);
  const int splits = cuda_flash_planned_splits(*pc.be);
  compare(pc.P, reference(pc.P), pc.r.out, pc.r.lse,
          c.name + " (splits " + std::to_string(splits) + ")");
  int sms = 0;
  ck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (sms == 132) EXPECT_EQ(splits, 1);
}

// Capture one run in a CUDA graph, then replan and replay with other lengths (same number of
// sequences, no more rows than captured): the kernels read every length on the device.
TEST_F(CudaFlash, GraphCaptureReplanReplay) {
  Case c{.name = "graph",
         .hq = 8,
         .hkv = 2,
         .seqs = {{16, 600}, {1, 900}, {8, 64}},
         .force_splits = 3};
  PreparedCase pc(c, 11);
  Problem& P = pc.P;
  AttentionBackend& be = *pc.be;
  DeviceRun& r = pc.r;
  CapturedRun g(be, r.args);
  EXPECT_EQ(cuda_flash_planned_parts(be), 1);  // chunk, decode, chunk: one part
  g.replay();
  compare(P, reference(P), r.out, r.lse, "graph replay 1");

  // Next step: shorter queries and keys within the captured bounds; replan on host as an engine
  // would, update the device metadata, replay the same graph.
  P.cu = {0, 9, 10, 14};
  P.used = {590, 901 - 1, 40};
  P.total_q = 14;
  P.c.seqs = {{9, 590}, {1, 900}, {4, 40}};
  be.plan(host_batch(P), layer_of(P, true));
  ck(cudaMemcpy(P.dcu.p, P.cu.data(), P.cu.size() * 4, cudaMemcpyHostToDevice));
  ck(cudaMemcpy(P.dused.p, P.used.data(), P.used.size() * 4, cudaMemcpyHostToDevice));
  r.poison_out();
  g.replay();
  Outputs ref = reference(P);
  compare(P, ref, r.out, r.lse, "graph replay 2 (replanned)");
}

// Chunked-prefill steps: a batch of decodes (at most 16 packed rows a sequence) then prefill
// chunks, or chunks then decodes, runs each kind as its own part (its own form and split count);
// other orders, and one kind, stay one part. Every generation the device has, 16-bit and fp8
// caches, forced and planned splits, a ragged decode part, the features.
TEST_F(CudaFlash, MixedBatchesRunEachKindAsItsOwnPart) {
  struct Mixed {
    Case c;
    int parts;
    bool ragged_main = false;  // the main part (most query tokens) takes a count per sequence
  };
  const Seqs decodes_first = {{1, 1013}, {1, 0}, {1, 54}, {1, 300}, {0, 20}, {37, 600}, {129, 129}};
  Seqs long_and_short(39, {1, 64});  // one long decode among short ones, then a chunk
  long_and_short.insert(long_and_short.begin() + 7, {1, 16384});
  long_and_short.push_back({8, 900});
  const std::vector<Mixed> cases = {
      {{.name = "decodes first bf16 d128 32/8", .hq = 32, .hkv = 8, .seqs = decodes_first}, 2},
      {{.name = "decodes first fp8 e4m3 d128 32/4 splits 3",
        .kv = KvCacheDType::kFp8E4M3,
        .gran = ScaleGranularity::kPerTensor,
        .hq = 32,
        .hkv = 4,
        .seqs = decodes_first,
        .force_splits = 3},
       2},
      // {4, 800} at 4 heads a KV head is 16 packed rows: a speculative decode, decode-sized.
      {{.name = "chunk first fp16 fp8 e5m2 per-head d128",
        .dtype = DType::kFloat16,
        .kv = KvCacheDType::kFp8E5M2,
        .gran = ScaleGranularity::kPerHead,
        .hq = 16,
        .hkv = 4,
        .seqs = {{200, 1013}, {1, 97}, {1, 1}, {4, 800}}},
       2},
      {{.name = "decodes first fp8 e4m3 d256",
        .kv = KvCacheDType::kFp8E4M3,
        .gran = ScaleGranularity::kPerTensor,
        .head = 256,
        .hq = 16,
        .hkv = 4,
        .seqs = {{1, 2000}, {1, 64}, {300, 300}}},
       2},
      {{.name = "decodes first bf16 d256",
        .head = 256,
        .hq = 8,
        .hkv = 2,
        .seqs = {{1, 700}, {1, 1013}, {33, 100}}},
       2},
      {{.name = "features: window, softcap, ALiBi, sinks",
        .hq = 8,
        .hkv = 2,
        .seqs = {{1, 1013}, {1, 97}, {50, 400}},
        .wl = 100,
        .softcap = 30.f,
        .alibi = true,
        .sinks = true},
       2},
      {{.name = "ragged decode part", .hq = 32, .hkv = 8, .seqs = long_and_short}, 2, true},
      {{.name = "decode, chunk, decode: one part",
        .hq = 8,
        .hkv = 2,
        .seqs = {{1, 97}, {40, 200}, {1, 54}}},
       1},
      {{.name = "decodes only", .hq = 8, .hkv = 2, .seqs = {{1, 97}, {0, 5}, {2, 300}}}, 1},
      // Under the default threshold (32 MiB at 16 bits): two decodes reading 7.9 MiB ride along
      // in the chunk's launch; 10000 keys at 8 KV heads (39 MiB) are a part of their own.
      {{.name = "small decode run, default threshold: one part",
        .hq = 32,
        .hkv = 8,
        .seqs = {{1, 1013}, {1, 1013}, {64, 300}},
        .part_min_decode_bytes = CudaFlashOptions{}.part_min_decode_bytes},
       1},
      {{.name = "large decode run, default threshold: two parts",
        .hq = 32,
        .hkv = 8,
        .seqs = {{1, 10000}, {1, 54}, {64, 300}},
        .part_min_decode_bytes = CudaFlashOptions{}.part_min_decode_bytes},
       2},
      {{.name = "awkward prefill lengths, a one-token sequence first",
        .hq = 8,
        .hkv = 2,
        .seqs = kAwkwardPrefill},
       2},
  };
  uint32_t seed = 300;
  for (const Mixed& m : cases) {
    const std::vector<int> gens = device_cc() == 90 ? std::vector{2, 3} : std::vector{2};
    for (int gen : gens)
      for (bool concurrent : {true, false}) {
        if (!concurrent && m.parts != 2) continue;
        Case c = m.c;
        c.generation = gen;
        c.concurrent_parts = concurrent;
        PreparedCase pc(c, seed);
        EXPECT_EQ(cuda_flash_planned_parts(*pc.be), m.parts) << c.name;
        pc.be->run(pc.r.args, nullptr);
        ck(cudaDeviceSynchronize());
        if (m.ragged_main) EXPECT_GT(cuda_flash_planned_split_chunk(*pc.be), 0) << c.name;
        compare(pc.P, reference(pc.P), pc.r.out, pc.r.lse,
                c.name + " (generation " + std::to_string(gen) + ", splits " +
                    std::to_string(cuda_flash_planned_splits(*pc.be)) +
                    (concurrent ? ")" : ", parts in turn)"));
      }
    ++seed;
  }
}

// The same for a batch of two parts (decodes, then a chunk): each part's kernels find their
// sequences and tokens through the offset metadata and their own first token, so the replayed
// graph serves the next step's lengths; CUDA_FLASH under each generation, CUDA_MLA under each
// form; concurrent (the graph holds the side stream's fork and join) and in turn.
TEST_F(CudaFlash, GraphCaptureTwoPartsReplanReplay) {
  std::vector<Case> cases;
  const std::vector<int> gens = device_cc() == 90 ? std::vector{2, 3} : std::vector{2};
  for (bool concurrent : {true, false}) {
    const std::string how = concurrent ? "" : " in turn";
    for (int gen : gens)
      for (int splits : {0, 3})
        cases.push_back({.name = "graph two parts gen " + std::to_string(gen) + " splits " +
                                 std::to_string(splits) + how,
                         .hq = 8,
                         .hkv = 2,
                         .seqs = {{1, 900}, {1, 300}, {24, 600}},
                         .force_splits = splits,
                         .generation = gen,
                         .concurrent_parts = concurrent});
    // CUDA_MLA at 16 heads: 16 rows a decode, 384 and 320 for the chunk (over four of either
    // form's row blocks).
    for (int form : {0, cuda_mla::kWideForm})
      cases.push_back({.name = "graph two parts CUDA_MLA form " + std::to_string(form) + how,
                       .head = 576,
                       .head_v = 512,
                       .hq = 16,
                       .hkv = 1,
                       .block = 64,
                       .seqs = {{1, 900}, {1, 300}, {24, 600}},
                       .mla = true,
                       .mla_form = form,
                       .concurrent_parts = concurrent});
  }
  for (const Case& c : cases) {
    PreparedCase pc(c, 12);
    Problem& P = pc.P;
    CapturedRun g(*pc.be, pc.r.args);
    EXPECT_EQ(cuda_flash_planned_parts(*pc.be), 2) << c.name;
    g.replay();
    compare(P, reference(P), pc.r.out, pc.r.lse, c.name + " replay 1");
    P.cu = {0, 1, 2, 22};
    P.used = {899, 250, 590};
    P.total_q = 22;
    P.c.seqs = {{1, 899}, {1, 250}, {20, 590}};
    pc.be->plan(host_batch(P), layer_of(P, true));
    ck(cudaMemcpy(P.dcu.p, P.cu.data(), P.cu.size() * 4, cudaMemcpyHostToDevice));
    ck(cudaMemcpy(P.dused.p, P.used.data(), P.used.size() * 4, cudaMemcpyHostToDevice));
    pc.r.poison_out();
    g.replay();
    compare(P, reference(P), pc.r.out, pc.r.lse, c.name + " replay 2 (replanned)");
  }
}

// A PrefixLM batch captured in a graph (v2's prefill form, and v3's Hopper form on SM90), with
// forced splits; then the next step's ranges and lengths, replanned on the host and written in
// place on the device, replayed through the same graph.
TEST_F(CudaFlash, GraphCapturePrefixLmReplanReplay) {
  std::vector<int> gens = {2};
  if (device_cc() == 90) gens.push_back(3);
  for (int gen : gens) {
    Case c{.name = "graph mm gen " + std::to_string(gen),
           .head = 256,
           .hq = 8,
           .hkv = 1,
           .seqs = {{300, 300}, {40, 500}},
           .force_splits = 3,
           .generation = gen,
           .mm = {{{0, 256}}, {{470, 490}}}};
    PreparedCase pc(c, 17);
    Problem& P = pc.P;
    CapturedRun g(*pc.be, pc.r.args);
    EXPECT_EQ(cuda_flash_planned_form(*pc.be), gen == 3 ? cuda_flash::kHopperPrefillForm : 0);
    g.replay();
    compare(P, reference(P), pc.r.out, pc.r.lse, c.name + " replay 1");
    // The same offsets, other ranges and fewer keys (the graph's shapes are the plan's bounds).
    P.used = {280, 490};
    P.c.seqs = {{300, 280}, {40, 490}};
    P.mm_rng = {0, 200, 455, 470};
    c.mm = {{{0, 200}}, {{455, 470}}};
    P.c.mm = c.mm;
    pc.be->plan(host_batch(P), layer_of(P, true));
    ck(cudaMemcpy(P.dused.p, P.used.data(), P.used.size() * 4, cudaMemcpyHostToDevice));
    ck(cudaMemcpy(P.dmm_rng.p, P.mm_rng.data(), P.mm_rng.size() * 4, cudaMemcpyHostToDevice));
    pc.r.poison_out();
    g.replay();
    compare(P, reference(P), pc.r.out, pc.r.lse, c.name + " replay 2 (replanned)");
  }
}

// A decode-form batch with splits captured in a graph: on SM90 the flash kernel lets the combine
// kernel launch early (programmatic dependent launch) and both replay from the graph; each
// replay writes a poisoned output again.
TEST_F(CudaFlash, GraphCaptureDecodeSplits) {
  const Case bf16{.name = "graph decode",
                  .hq = 8,
                  .hkv = 2,
                  .seqs = {{1, 3000}, {1, 700}, {1, 0}, {1, 33}},
                  .sinks = true,
                  .force_splits = 6};
  Case fp8 = bf16;  // head 256's decode form exists over fp8 caches only
  fp8.name = "graph decode fp8 e4m3 per-head head 256";
  fp8.kv = KvCacheDType::kFp8E4M3;
  fp8.gran = ScaleGranularity::kPerHead;
  fp8.head = 256;
  for (const Case& c : {bf16, fp8}) {
    PreparedCase pc(c, 13);
    ASSERT_EQ(cuda_flash_planned_splits(*pc.be), 6) << c.name;
    CapturedRun g(*pc.be, pc.r.args);
    if (c.head == 256) EXPECT_EQ(cuda_flash_planned_form(*pc.be), cuda_flash::kV2DecodeForm);
    const Outputs ref = reference(pc.P);
    for (int replay = 1; replay <= 2; ++replay) {
      pc.r.poison_out();
      g.replay();
      compare(pc.P, ref, pc.r.out, pc.r.lse, c.name + " replay " + std::to_string(replay));
    }
  }
}

// Layers of a model step: one plan, one workspace, back-to-back decode calls on one stream with
// no synchronization between them. On SM90 each decode kernel is a programmatic dependent of the
// previous call's combine kernel and may start while that one still reads the shared workspace:
// it must not write partials (or read Q and the cache) before the combine is done.
TEST_F(CudaFlash, BackToBackDecodeCallsShareTheWorkspace) {
  for (const KvCacheDType kv : {KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3}) {
    const Case c{.name = std::string("back to back ") + std::string(to_string(kv)),
                 .kv = kv,
                 .hq = 32,
                 .hkv = 4,
                 .seqs = {{1, 9000}, {1, 4000}},
                 .force_splits = 16};
    constexpr int kLayers = 4;
    std::vector<std::unique_ptr<PreparedCase>> layers;
    for (int i = 0; i < kLayers; ++i) layers.push_back(std::make_unique<PreparedCase>(c, 40 + i));
    AttentionBackend& be = *layers[0]->be;  // its plan and workspace serve every layer
    cudaStream_t s = nullptr;
    ck(cudaStreamCreate(&s));
    for (int round = 0; round < 2; ++round) {
      for (auto& l : layers) l->r.poison_out();
      for (auto& l : layers) {
        AttentionArgs a = l->r.args;
        a.workspace = layers[0]->r.ws.p;
        be.run(a, s);
      }
      ck(cudaStreamSynchronize(s));
      for (int i = 0; i < kLayers; ++i)
        compare(layers[size_t(i)]->P, reference(layers[size_t(i)]->P), layers[size_t(i)]->r.out,
                layers[size_t(i)]->r.lse,
                c.name + " layer " + std::to_string(i) + " round " + std::to_string(round));
    }
    ck(cudaStreamDestroy(s));
  }
}

// earlier_rows_settled lets the decode form copy its first tiles before its wait where they hold
// only rows below the sequence's own (docs/semantics.md §7): the same kernels, another order of
// copies and cp.async groups. Every output bit must equal the waiting order's: GQA and MQA, q_len
// 1-3 (tiles that straddle the first query row wait), pages 16 / 64 / 128, forced and planned
// splits (CTAs of fewer tiles than stages), a window, ragged plans, chunks, heads 64 / 256, fp8.
// The backend copies early wherever the batch allows (early_copies 1), not by the grid's rule.
TEST_F(CudaFlash, EarlyCopiesChangeNoOutputBit) {
  const std::vector<std::pair<int, int>> mixed = {{1, 9000}, {3, 1013}, {1, 97}, {2, 54}, {1, 1}};
  std::vector<Case> cases;
  for (const KvCacheDType kv : {KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3})
    for (const int block : {16, 64, 128}) {
      const std::string tag = std::string(to_string(kv)) + " page " + std::to_string(block);
      const ScaleGranularity gran =
          is_fp8(kv) ? ScaleGranularity::kPerTensor : ScaleGranularity::kNone;
      cases.push_back({.name = "32/4 " + tag,
                       .kv = kv,
                       .gran = gran,
                       .hq = 32,
                       .hkv = 4,
                       .block = block,
                       .seqs = {{1, 32768}}});
      cases.push_back({.name = "mixed forced 16 " + tag,
                       .kv = kv,
                       .gran = gran,
                       .block = block,
                       .seqs = mixed,
                       .force_splits = 16});
      cases.push_back(
          {.name = "mixed " + tag, .kv = kv, .gran = gran, .block = block, .seqs = mixed});
    }
  cases.push_back({.name = "ragged", .hq = 32, .hkv = 8, .seqs = kRaggedDecode});
  // (q_len 3 times the group must fit the decode form's 16 rows)
  cases.push_back({.name = "window", .hq = 4, .hkv = 1, .seqs = mixed, .wl = 600});
  cases.push_back({.name = "chunked", .seqs = {{1, 5000}, {2, 3000}}, .chunk = 1024});
  cases.push_back({.name = "head 64", .head = 64, .hq = 8, .hkv = 2, .seqs = mixed});
  cases.push_back({.name = "head 256 fp8 e5m2",
                   .kv = KvCacheDType::kFp8E5M2,
                   .gran = ScaleGranularity::kPerHead,
                   .head = 256,
                   .seqs = mixed,
                   .sinks = true});
  const bool pdl = pdl_on();
  for (Case& c : cases) {
    c.early_copies = 1;
    SCOPED_TRACE(c.name);
    PreparedCase pc(c, 91);
    const Outputs ref = reference(pc.P);
    auto run = [&](bool settled) {
      pc.r.poison_out();
      AttentionArgs a = pc.r.args;
      a.batch.earlier_rows_settled = settled;
      pc.be->run(a, nullptr);
      ck(cudaDeviceSynchronize());
      compare(pc.P, ref, pc.r.out, pc.r.lse, c.name + (settled ? " (early)" : " (waiting)"));
      return std::make_pair(download<uint16_t>(pc.r.out, pc.r.out.n / 2),
                            download<float>(pc.r.lse, pc.r.lse.n / 4));
    };
    const auto waiting = run(false), early = run(true);
    // Every case runs the decode form, which copies early on SM90 (a chunked layer's pieces
    // launch without a dependency, so without early copies).
    EXPECT_GT(cuda_flash_decode_ctas_per_sm(*pc.be), 0) << c.name;
    if (c.chunk == 0) EXPECT_EQ(cuda_flash_decode_early_copies(*pc.be), pdl) << c.name;
    EXPECT_TRUE(waiting.first == early.first) << c.name << ": outputs differ";
    EXPECT_EQ(std::memcmp(waiting.second.data(), early.second.data(), pc.r.lse.n), 0)
        << c.name << ": lse differs";
  }
}

// Early copies by the launch's grid (tiles.hpp early_copies_pay): a grid that leaves the next
// layer's CTAs no free slot copies early; one of a CTA per SM, a ragged plan and a batch without
// earlier_rows_settled do not; early_copies 2 never does.
TEST_F(CudaFlash, EarlyCopiesFollowTheGrid) {
  if (!pdl_on()) GTEST_SKIP() << "early copies need programmatic dependent launch (SM90)";
  int sms = 0;
  ck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  struct Expect {
    Case c;
    bool settled, early;
  };
  // 1x32k 32/8: 8 KV heads' splits fill every slot; 32/4 forced to sms / 4 splits: one CTA
  // per SM (at most); ragged: a plan of chunks.
  const std::vector<Expect> expects = {
      {{.name = "full", .hq = 32, .hkv = 8, .seqs = {{1, 32768}}}, true, true},
      {{.name = "unsettled", .hq = 32, .hkv = 8, .seqs = {{1, 32768}}}, false, false},
      {{.name = "never", .hq = 32, .hkv = 8, .seqs = {{1, 32768}}, .early_copies = 2}, true, false},
      {{.name = "one per SM", .hq = 32, .hkv = 4, .seqs = {{1, 32768}}, .force_splits = sms / 4},
       true,
       false},
      {{.name = "ragged", .hq = 32, .hkv = 8, .seqs = kRaggedDecode}, true, false}};
  for (const Expect& e : expects) {
    SCOPED_TRACE(e.c.name);
    PreparedCase pc(e.c, 93);
    AttentionArgs a = pc.r.args;
    a.batch.earlier_rows_settled = e.settled;
    pc.be->run(a, nullptr);
    ck(cudaDeviceSynchronize());
    compare(pc.P, reference(pc.P), pc.r.out, pc.r.lse, e.c.name);
    EXPECT_EQ(cuda_flash_decode_early_copies(*pc.be), e.early)
        << e.c.name << ": " << cuda_flash_planned_splits(*pc.be) << " splits, "
        << cuda_flash_planned_split_chunk(*pc.be) << " keys a chunk, "
        << cuda_flash_decode_ctas_per_sm(*pc.be) << " CTAs per SM";
  }
}

// A serving step's chain: the KV write of each sequence's new rows, then the decode with
// earlier_rows_settled, on one stream with no synchronization between them (on SM90 the decode is
// a programmatic dependent of the write). The new rows first hold other values (written before);
// the decode must read what the step's write put there, and the rows it copies early must be the
// old ones. Later keys grow (k_growth), so the new rows weigh most in every output.
TEST_F(CudaFlash, EarlyCopiesReadTheStepsKvWrite) {
  for (const KvCacheDType kv : {KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3}) {
    const Case c{.name = std::string("step chain ") + std::string(to_string(kv)),
                 .kv = kv,
                 .gran = is_fp8(kv) ? ScaleGranularity::kPerTensor : ScaleGranularity::kNone,
                 .hq = 32,
                 .hkv = 4,
                 .block = 64,
                 .seqs = {{1, 20000}, {2, 3000}, {1, 700}},
                 .k_growth = 0.0005f,
                 .early_copies = 1};
    SCOPED_TRACE(c.name);
    PreparedCase pc(c, 92);
    Problem& P = pc.P;
    // The step's rows: each sequence's last q_len keys, their slots and source rows.
    const size_t krow = size_t(c.hkv) * c.head, vrow = size_t(c.hkv) * P.hv;
    std::vector<int64_t> slots;
    std::vector<float> k_new, v_new;
    size_t key = 0;
    for (size_t s = 0; s < c.seqs.size(); ++s) {
      const auto [ql, kl] = c.seqs[s];
      for (int j = 0; j < kl; ++j, ++key)
        if (j >= kl - ql) {
          slots.push_back(P.slots[key]);
          k_new.insert(k_new.end(), P.k_src.begin() + key * krow,
                       P.k_src.begin() + (key + 1) * krow);
          v_new.insert(v_new.end(), P.v_src.begin() + key * vrow,
                       P.v_src.begin() + (key + 1) * vrow);
        }
    }
    std::vector<float> k_old(k_new.size()), v_old(v_new.size());
    for (size_t i = 0; i < k_new.size(); ++i) k_old[i] = -0.5f * k_new[i];
    for (size_t i = 0; i < v_new.size(); ++i) v_old[i] = 1.f - v_new[i];
    DevBuf dslots = upload(slots), dk_new = upload(k_new), dv_new = upload(v_new),
           dk_old = upload(k_old), dv_old = upload(v_old);
    KvWriteArgs w;
    w.dtype = DType::kFloat32;
    w.num_tokens = int(slots.size());
    w.k_stride_token = int64_t(krow);
    w.k_stride_head = c.head;
    w.v_stride_token = int64_t(vrow);
    w.v_stride_head = P.hv;
    w.slot_mapping = dslots.as<int64_t>();
    w.cache = P.view;
    const Outputs ref = reference(P);  // the cache as write_cache left it: the new rows' values
    cudaStream_t st = nullptr;
    ck(cudaStreamCreate(&st));
    for (int round = 0; round < 3; ++round) {
      w.k = dk_old.p;
      w.v = dv_old.p;
      pc.be->write_kv(w, st);
      ck(cudaStreamSynchronize(st));
      pc.r.poison_out();
      w.k = dk_new.p;
      w.v = dv_new.p;
      pc.be->write_kv(w, st);
      AttentionArgs a = pc.r.args;
      a.batch.earlier_rows_settled = true;
      pc.be->run(a, st);
      ck(cudaStreamSynchronize(st));
      compare(P, ref, pc.r.out, pc.r.lse, c.name + " round " + std::to_string(round));
    }
    ck(cudaStreamDestroy(st));
  }
}

// A decode batch of one long sequence among short ones fills the GPU with one split each, so the
// plan gives each sequence its own split count (the long one several, the short ones one): sinks
// are counted once per sequence, unsplit sequences are written by the flash kernel and split ones
// by the combine. Then a graph captured on shorter lengths replays the full ones: two sequences
// grow past what the captured grid's items cover at the captured chunk, so the kernels double
// the chunk (and cap each count at the captured workspace's) and still cover every key. At head
// 128 over bf16, and at head 256 over fp8 (the decode form's launch the plan keeps for fp8 only).
void ragged_graph_case(const Case& c) {
  SCOPED_TRACE(c.name);
  PreparedCase pc(c, 47);
  Problem& P = pc.P;
  const std::vector<int32_t> full_used = P.used;
  auto set_used = [&](const std::vector<int32_t>& used) {
    P.used = used;
    for (size_t s = 0; s < used.size(); ++s) P.c.seqs[s].second = used[s];
    ck(cudaMemcpy(P.dused.p, P.used.data(), P.used.size() * 4, cudaMemcpyHostToDevice));
  };
  int sms = 0;
  ck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // 1. The full batch, planned as it is.
  pc.be->run(pc.r.args, nullptr);
  ck(cudaDeviceSynchronize());
  const int chunk = cuda_flash_planned_split_chunk(*pc.be);
  if (sms >= 80) ASSERT_GT(chunk, 0) << "expected a split count per sequence";
  compare(P, reference(P), pc.r.out, pc.r.lse,
          "ragged decode (chunk " + std::to_string(chunk) + ", splits " +
              std::to_string(cuda_flash_planned_splits(*pc.be)) + ")");
  if (chunk == 0) return;

  // 2. Captured on shorter lengths: the 20000-key sequence splits, the rest (the 9000-key one
  // cut to 300) do not.
  std::vector<int32_t> shorter = full_used;
  shorter[1] = 300;
  for (size_t s = 2; s < shorter.size(); ++s) shorter[s] = std::min(shorter[s], 100);
  set_used(shorter);
  pc.be->plan(host_batch(P), layer_of(P, true));
  pc.r.ws = DevBuf(pc.be->workspace_bytes());  // this plan's, captured with it
  pc.r.args.workspace = pc.r.ws.p;
  CapturedRun g(*pc.be, pc.r.args);  // the counts as run (an fp8 cache's form at head 256)
  const int captured_splits = cuda_flash_planned_splits(*pc.be);
  const int captured_chunk = cuda_flash_planned_split_chunk(*pc.be);
  ASSERT_GT(captured_chunk, 0);
  ASSERT_LT(300, captured_chunk) << "the 300-key sequence must not split when captured";
  ASSERT_GT(9000, captured_chunk) << "the 9000-key sequence must outgrow the captured items";
  pc.r.poison_out();
  g.replay();
  compare(P, reference(P), pc.r.out, pc.r.lse, "ragged graph replay (captured lengths)");

  // 3. The same graph over the full lengths.
  set_used(full_used);
  pc.r.poison_out();
  g.replay();
  compare(P, reference(P), pc.r.out, pc.r.lse,
          "ragged graph replay (longer lengths, " + std::to_string(captured_splits) +
              " captured splits)");
}

TEST_F(CudaFlash, RaggedDecodeSplitsPerSequence) {
  Seqs full = {{1, 20000}, {1, 9000}};
  std::mt19937 lens(7);
  for (int i = 0; i < 40; ++i) full.push_back({1, 200 + int(lens() % 700)});
  full.push_back({1, 0});
  const Case bf16{.name = "ragged decode", .hq = 32, .hkv = 8, .seqs = full, .sinks = true};
  Case fp8 = bf16;
  fp8.name = "ragged decode fp8 e5m2 per-tensor head 256";
  fp8.kv = KvCacheDType::kFp8E5M2;
  fp8.gran = ScaleGranularity::kPerTensor;
  fp8.head = 256;
  for (const Case& c : {bf16, fp8}) ragged_graph_case(c);
}
// The ragged plan under the other features and caches: fp8 caches (per-head e4m3 with ALiBi and
// softcap; per-tensor e5m2 at head 64, fp16; e5m2 at head 256, whose decode form exists for fp8
// only) and a sliding window whose visible keys host and kernels count alike. Head 256 over a
// 16-bit cache has no decode form (its batches run a prefill form), so its plan keeps one count
// for every sequence, taken from the ragged model (skewed_uniform_splits).
TEST_F(CudaFlash, RaggedDecodeEveryFeature) {
  Seqs seqs = {{1, 12000}};
  for (int i = 0; i < 36; ++i) seqs.push_back({1, 100 + 37 * i});
  seqs.push_back({2, 3000});  // two query tokens: 8 packed rows per KV head at group 4
  const std::vector<Case> cases = {
      {.name = "ragged fp8 e4m3 per-head, alibi, softcap",
       .kv = KvCacheDType::kFp8E4M3,
       .gran = ScaleGranularity::kPerHead,
       .hq = 32,
       .hkv = 8,
       .seqs = seqs,
       .softcap = 30.f,
       .alibi = true},
      {.name = "ragged fp16 over fp8 e5m2, head 64",
       .dtype = DType::kFloat16,
       .kv = KvCacheDType::kFp8E5M2,
       .gran = ScaleGranularity::kPerTensor,
       .head = 64,
       .hq = 16,
       .hkv = 4,
       .block = 64,
       .seqs = seqs,
       .sinks = true},
      {.name = "ragged head 256", .head = 256, .hq = 16, .hkv = 8, .seqs = seqs},
      {.name = "ragged fp8 e5m2 per-tensor head 256",
       .kv = KvCacheDType::kFp8E5M2,
       .gran = ScaleGranularity::kPerTensor,
       .head = 256,
       .hq = 16,
       .hkv = 8,
       .seqs = seqs},
      {.name = "ragged window 6000", .hq = 32, .hkv = 8, .seqs = seqs, .wl = 5999}};
  int sms = 0;
  ck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (const Case& c : cases) {
    const PlannedRun run = run_planned(c, 48);
    if (sms < 80) continue;
    EXPECT_EQ(run.chunk > 0, cuda_flash::has_decode_form(c.head, c.head, is_fp8(c.kv)))
        << c.name << ": a split count per sequence exactly where the decode form runs";
    // Where it does not (head 256 over bf16), the skewed batch still splits: one count for all
    // (the heuristic alone, seeing 304 CTAs, splits nothing).
    EXPECT_GT(run.splits, 1) << c.name;
  }
}

// write_kv encodes exactly like the host encoders of numeric.hpp: RNE, fp8 saturating, NaN kept.
TEST_F(CudaFlash, WriteKvEncodesLikeHost) {
  for (KvCacheDType kvd : {KvCacheDType::kFp8E4M3, KvCacheDType::kFp8E5M2, KvCacheDType::kBFloat16,
                           KvCacheDType::kFloat16}) {
    const int n = 64, heads = 2, d = 16, block = 4;
    std::vector<float> src(size_t(n) * heads * d);
    std::mt19937 rng(12);
    std::uniform_real_distribution<float> U(-2.f, 2.f);
    for (auto& x : src) x = U(rng) * 300.f;
    src[0] = 1e6f;
    src[1] = -1e6f;
    src[2] = std::nanf("");
    src[3] = 1e-7f;
    const bool q8 = is_fp8(kvd);
    const int elem = q8 ? 1 : 2;
    std::vector<float> scale = {q8 ? 2.f : 1.f, q8 ? 0.5f : 1.f};
    std::vector<int64_t> slots(n);
    for (int i = 0; i < n; ++i) slots[i] = (i * 7) % n;  // scattered
    if (!q8) slots[5] = -1;                              // skipped token
    DevBuf dsrc = upload(src), dslots = upload(slots), dscale = upload(scale);
    const size_t bytes = size_t(n) * heads * d * elem;
    DevBuf cache(bytes);
    ck(cudaMemset(cache.p, 0, bytes));
    KvWriteArgs w;
    w.k = dsrc.p;
    w.dtype = DType::kFloat32;
    w.num_tokens = n;
    w.k_stride_token = heads * d;
    w.k_stride_head = d;
    w.slot_mapping = dslots.as<int64_t>();
    w.cache.k = cache.p;
    w.cache.dtype = kvd;
    w.cache.block_size = block;
    w.cache.num_kv_heads = heads;
    w.cache.head_size = d;
    w.cache.stride_token = d * elem;
    w.cache.stride_head = int64_t(block) * d * elem;
    w.cache.stride_block = int64_t(heads) * block * d * elem;
    w.cache.scale_granularity = q8 ? ScaleGranularity::kPerHead : ScaleGranularity::kNone;
    w.cache.k_scale = q8 ? dscale.as<float>() : nullptr;
    auto be = make_cuda_flash_backend();
    be->write_kv(w, nullptr);
    ck(cudaDeviceSynchronize());
    auto got = download<uint8_t>(cache, bytes);
    int mismatches = 0;
    for (int t = 0; t < n; ++t) {
      if (slots[t] < 0) continue;
      const int64_t blk = slots[t] / block, off = slots[t] % block;
      for (int h = 0; h < heads; ++h)
        for (int e = 0; e < d; ++e) {
          const float x = src[(size_t(t) * heads + h) * d + e];
          const size_t at = size_t(blk * w.cache.stride_block + h * w.cache.stride_head +
                                   off * w.cache.stride_token) +
                            size_t(e) * elem;
          uint32_t want = 0, have = 0;
          switch (kvd) {
            case KvCacheDType::kFp8E4M3:
              want = float_to_fp8_e4m3(x / scale[h]);
              break;
            case KvCacheDType::kFp8E5M2:
              want = float_to_fp8_e5m2(x / scale[h]);
              break;
            case KvCacheDType::kBFloat16:
              want = float_to_bf16_bits(x);
              break;
            default:
              want = float_to_fp16_bits(x);
              break;
          }
          std::memcpy(&have, &got[at], elem);
          const bool both_nan = std::isnan(x);
          if (have != want &&
              !(both_nan &&
                ((elem == 1 && (have & 0x7f) == 0x7f) ||
                 (elem == 2 && std::isnan(act_float(uint16_t(have), kvd == KvCacheDType::kBFloat16
                                                                        ? DType::kBFloat16
                                                                        : DType::kFloat16))))))
            if (mismatches++ < 5)
              ADD_FAILURE() << to_string(kvd) << ": x=" << x << " want " << want << " have "
                            << have;
        }
    }
    EXPECT_EQ(mismatches, 0) << to_string(kvd);
  }
}

// The page zeroer clears exactly the listed pages of every tensor: 16-byte pages, and pages whose
// size (1000 bytes) leaves odd pages unaligned (the byte path). Bad ids are refused.
TEST_F(CudaFlash, ZeroPagesZeroesOnlyListedPages) {
  const int blocks = 6, tensors = 3;
  for (int64_t page : {int64_t(4096), int64_t(1000)}) {
    const size_t bytes = size_t(blocks) * page;
    std::vector<DevBuf> t;
    std::vector<void*> ptrs;
    for (int j = 0; j < tensors; ++j) {
      t.emplace_back(bytes);
      ck(cudaMemset(t.back().p, 0x5a, bytes));
      ptrs.push_back(t.back().p);
    }
    auto zeroer = make_cuda_page_zeroer(ptrs, page, blocks);
    std::vector<int32_t> ids = {4, 1};
    zeroer->zero_blocks(ids);
    ids = {3};
    zeroer->zero_blocks(ids);
    ck(cudaDeviceSynchronize());
    for (const DevBuf& b : t) {
      auto h = download<uint8_t>(b, bytes);
      for (int blk = 0; blk < blocks; ++blk) {
        const bool zeroed = blk == 4 || blk == 1 || blk == 3;
        for (int64_t i = 0; i < page; ++i)
          ASSERT_EQ(h[blk * page + i], zeroed ? 0 : 0x5a) << "page " << page << " block " << blk;
      }
    }
    std::vector<int32_t> bad = {blocks};
    EXPECT_THROW(zeroer->zero_blocks(bad), InvalidArgument);
    bad = {-1};
    EXPECT_THROW(zeroer->zero_blocks(bad), InvalidArgument);
  }
}

// Skips unless the device has `gib` GiB free (the tests below allocate caches past 4 GiB).
#define ATTNKIT_SKIP_WITHOUT_FREE_GIB(gib)                                                       \
  do {                                                                                           \
    size_t free_b = 0, total_b = 0;                                                              \
    ck(cudaMemGetInfo(&free_b, &total_b));                                                       \
    if (free_b < (size_t(gib) << 30))                                                            \
      GTEST_SKIP() << "needs " << (gib) << " GiB of device memory free, has " << (free_b >> 30); \
  } while (0)

// More pages than a grid row holds (65535) in one call, past the first 4 GiB of a tensor: every
// listed page zeroed, the pages between them as they were.
TEST_F(CudaFlash, ZeroPagesPastFourGiBManyAtOnce) {
  ATTNKIT_SKIP_WITHOUT_FREE_GIB(8);
  const int64_t page = 16384, top = far_offsets::kBaseBytes / page + 1, count = 70000;
  const int64_t blocks = top + 2 * count + 1;
  DevBuf t(size_t(blocks * page));
  ck(cudaMemset(t.as<uint8_t>() + top * page, 0x5a, size_t((blocks - top) * page)));
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < count; ++i) ids.push_back(int32_t(top + 2 * i));  // every other page
  auto zeroer = make_cuda_page_zeroer({t.p}, page, int(blocks));
  zeroer->zero_blocks(ids);
  ck(cudaDeviceSynchronize());
  std::vector<uint8_t> h(static_cast<size_t>(page));
  for (int64_t i : {int64_t(0), int64_t(1), int64_t(2), int64_t(65534), int64_t(65535),
                    int64_t(65536), 2 * count - 1, 2 * count}) {
    ck(cudaMemcpy(h.data(), t.as<uint8_t>() + (top + i) * page, size_t(page),
                  cudaMemcpyDeviceToHost));
    const uint8_t want = i % 2 == 0 && i < 2 * count ? 0 : 0x5a;
    int64_t wrong = 0;
    for (uint8_t x : h) wrong += x != want;
    EXPECT_EQ(wrong, 0) << "page top + " << i;
  }
}

// Used blocks past the first 4 GiB of the cache (reliability catalogue: offsets computed in 32
// bits wrap there): K element offsets above 2^31 and byte offsets above 2^32, written by
// write_kv and read by each form (decode with splits, prefill, fp8 decode, the MLA forms); and
// query / output tokens as far apart (strided views), nothing written between the rows.
TEST_F(CudaFlash, BlocksPastFourGiB) {
  ATTNKIT_SKIP_WITHOUT_FREE_GIB(24);  // K, V, Q and O views of 4-5 GiB each
  const int64_t far = far_offsets::kBaseBytes;
  run_case(Case{.name = "bf16 decode and prefill past 4 GiB",
                .hq = 32,
                .hkv = 8,
                .seqs = {{1, 3000}, {1, 54}, {7, 300}, {1, 1013}},
                .base_bytes = far,
                .far_tokens = true},
           61);
  run_case(Case{.name = "fp8 e4m3 per head past 4 GiB",
                .kv = KvCacheDType::kFp8E4M3,
                .gran = ScaleGranularity::kPerHead,
                .hq = 32,
                .hkv = 4,
                .seqs = {{1, 2000}, {5, 97}},
                .base_bytes = far,
                .far_tokens = true},
           62);
  run_case(Case{.name = "MLA latent past 4 GiB",
                .head = 576,
                .head_v = 512,
                .hq = 16,
                .hkv = 1,
                .block = 64,
                .seqs = {{1, 700}, {2, 65}},
                .mla = true,
                .base_bytes = far,
                .far_tokens = true},
           63);
}

TEST_F(CudaFlash, UnbuiltHeadSizeIsUnsupported) {
  Case c{.name = "d112", .head = 112, .hq = 2, .hkv = 1, .seqs = {{1, 10}}};
  if (cuda_flash::find_flash_instance(112, 112, DType::kBFloat16, cuda_flash::KvKind::k16Bit) >= 0)
    GTEST_SKIP() << "head size 112 is built";
  std::mt19937 rng(13);
  Problem P;
  build(P, c, rng);
  auto be = make_cuda_flash_backend();
  DeviceRun r;
  prepare_run(P, *be, r);
  EXPECT_THROW(be->run(r.args, nullptr), Unsupported);
}

// The form rule, without a GPU: the Hopper form on SM90 for plain logits, the wide form on other
// devices and for softcap, ALiBi or sinks; a forced form wins, and a forced Hopper form that
// cannot run is refused.
TEST(CudaMlaHost, FormByDeviceAndLogits) {
  using namespace cuda_mla;
  AttentionLayerParams L;
  L.num_heads = 128;
  L.num_kv_heads = 1;
  L.head_size = 576;
  L.head_size_v = 512;
  L.scale = 0.0722f;
  const cuda_flash::FlashGeometry h = mla_geometry(L, 90, 0);
  EXPECT_EQ(h.form, kHopperForm);
  EXPECT_EQ(h.block_m, kHopperRows);
  EXPECT_EQ(h.tile_keys, kHopperKeys);
  for (int cc : {80, 89, 100}) EXPECT_EQ(mla_geometry(L, cc, 0).form, kWideForm) << cc;
  EXPECT_EQ(mla_geometry(L, 90, kWideForm).form, kWideForm);
  EXPECT_EQ(mla_geometry(L, 90, kWideForm).block_m, cuda_flash::kWideBlockM);
  EXPECT_THROW(mla_geometry(L, 80, kHopperForm), Unsupported);
  // Decodes (a token at 128 heads) and chunks run as two parts under either form.
  const std::vector<int32_t> cu = {0, 1, 2, 3, 515}, used = {1000, 1000, 1000, 2000};
  for (int form : {kHopperForm, kWideForm}) {
    const int rows = mla_geometry(L, 90, form).part_rows;
    EXPECT_EQ(cuda_flash::batch_parts(cu.data(), used.data(), 4, 128, rows, 1152, 0),
              (std::vector<std::pair<int, int>>{{0, 3}, {3, 4}}))
        << form;
  }
  const float sinks[128] = {};
  for (int feature = 0; feature < 3; ++feature) {
    AttentionLayerParams f = L;
    if (feature == 0) f.logits_soft_cap = 30.f;
    if (feature == 1) f.alibi_slopes = sinks;
    if (feature == 2) f.sinks = sinks;
    EXPECT_EQ(mla_geometry(f, 90, 0).form, kWideForm) << feature;
    EXPECT_THROW(mla_geometry(f, 90, kHopperForm), Unsupported) << feature;
  }
}

#else

TEST(CudaFlash, GpuSuite) {
  GTEST_SKIP() << "CUDA_FLASH kernels are not in this build (configure with the cuda preset)";
}

#endif  // ATTNKIT_CUDA_FLASH_KERNELS

// CPU-only checks (run everywhere): the declaration is the manifest's, and a build without the
// kernels says so instead of pretending.
// The kernels map packed rows to (token, head) and key positions to (block, offset) with FastDiv
// instead of integer division: it must agree with `/` for every group and block size a model can
// have and dividends over the whole int range.
// Chunk pieces (tiles.hpp chunk_piece) against the semantics by brute force: the pieces cut a
// sequence's rows in order, and every row sees through its piece (bottom-right aligned, its
// keys from the chunk's first on) exactly the keys docs/semantics.md §4 gives it, causal and not.
TEST(CudaFlashHost, ChunkPiecesAreEachRowsChunk) {
  std::mt19937 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int C = 1 + int(rng() % 40);
    const int k = int(rng() % 200);
    const int q = int(rng() % (trial % 3 == 0 ? k + 8 : 1 + std::min(k, 70)));
    const int n = cuda_flash::chunk_pieces(q, k, C);
    if (q == 0) {
      EXPECT_EQ(n, 0);
      continue;
    }
    int next_row = 0;
    for (int j = 0; j < n; ++j) {
      const cuda_flash::ChunkPiece pc = cuda_flash::chunk_piece(q, k, C, j);
      ASSERT_EQ(pc.row0, next_row) << "q " << q << " k " << k << " C " << C << " piece " << j;
      ASSERT_GT(pc.rows, 0);
      next_row += pc.rows;
      ASSERT_EQ(pc.first_key % C, 0);
      ASSERT_LE(pc.keys, C);
      ASSERT_LE(pc.first_key + pc.keys, k);
      for (int r = pc.row0; r < pc.row0 + pc.rows; ++r) {
        const int64_t p = int64_t(k) - q + r;                           // the row's key position
        const int64_t qv = int64_t(pc.keys) - pc.rows + (r - pc.row0);  // ... in its piece
        for (bool causal : {true, false})
          for (int64_t key = 0; key < k; ++key) {
            const int64_t c0 = chunk_first_key(p, C);
            const bool want = key >= c0 && key < c0 + C && (!causal || key <= p);
            const int64_t kv = key - pc.first_key;
            const bool got = kv >= 0 && kv < pc.keys && (!causal || kv <= qv);
            ASSERT_EQ(got, want) << "q " << q << " k " << k << " C " << C << " row " << r << " key "
                                 << key << (causal ? " causal" : " non-causal");
          }
        // Windows and ALiBi see the same distance to every key.
        if (pc.keys > 0) ASSERT_EQ(qv, p - pc.first_key);
        ++checked;
      }
    }
    EXPECT_EQ(next_row, q);
  }
  EXPECT_GT(checked, 10000);
}

TEST(CudaFlashHost, FastDivisionIsExact) {
  std::mt19937 rng(7);
  std::vector<uint32_t> divisors = {96, 128, 256, 512, 528, 784, 1024, 2048, 4096};
  for (uint32_t d = 1; d <= 4096; d = d < 64 ? d + 1 : d * 2 + 1) divisors.push_back(d);
  for (uint32_t d : divisors) {
    const cuda_flash::FastDiv g = cuda_flash::make_fast_div(d);
    std::vector<int> ns = {0, 1, int(d) - 1, int(d), int(d) + 1, 2147483647, 2147483646};
    for (int i = 0; i < 2000; ++i) ns.push_back(int(rng() & 0x7fffffffu));
    for (int i = 0; i < 2000; ++i) ns.push_back(int(rng() % (64u * d)));
    for (int n : ns) {
      const int q = g.div(n);
      ASSERT_EQ(q, n / int(d)) << "n=" << n << " d=" << d;
      ASSERT_EQ(g.mod(n, q), n % int(d)) << "n=" << n << " d=" << d;
    }
  }
}

// The shared-memory row layout the kernels address K/V/Q tiles with (tiles.hpp SmemRows), for
// every row size a manifest head uses (16-bit and fp8 rows; 64, 80, 320 and 448 bytes padded):
// every (row, chunk) owns its own 16 bytes inside the tile; the 8 rows an ldmatrix reads at one
// logical chunk sit in 8 distinct 16-byte bank groups; swizzled rows are unpadded, so each 128-byte
// line of a packed tile in memory lands in the same aligned 128-byte span of the tile (one L2
// request per line for cp.async); and step(), the kernels' constant-offset walk from a lane
// address, lands where at() does.
template <int kRowBytes>
void check_smem_rows() {
  using R = cuda_flash::SmemRows<kRowBytes>;
  constexpr int kChunks = kRowBytes / 16, kRows = 64;
  const uint32_t base = 4096;  // 128-byte aligned
  std::vector<int> owner(size_t(kRows) * R::kStride / 16, -1);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kChunks; ++c) {
      const int off = R::at(r, c);
      ASSERT_EQ(off % 16, 0);
      ASSERT_GE(off, r * R::kStride);
      ASSERT_LT(off, (r + 1) * R::kStride) << "row " << r << " chunk " << c;
      ASSERT_EQ(owner[off / 16], -1) << "row " << r << " chunk " << c << " shares its slot";
      owner[off / 16] = r * kChunks + c;
      if (R::kSwizzled) {
        ASSERT_EQ(R::kStride, kRowBytes);
        ASSERT_EQ(off / 128, (r * kRowBytes + 16 * c) / 128) << "a 128-byte line left its span";
      }
    }
  for (int r0 = 0; r0 < kRows; r0 += 8)
    for (int c = 0; c < kChunks; ++c) {
      std::set<int> groups;
      for (int i = 0; i < 8; ++i) groups.insert((R::at(r0 + i, c) / 16) % 8);
      ASSERT_EQ(groups.size(), 8u) << "ldmatrix rows " << r0 << ".. chunk " << c << " conflict";
    }
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 2; ++c)
      for (int dr = 0; r + dr < kRows; dr += 8)
        for (int dc = 0; c + dc < kChunks; dc += c == 0 ? 1 : 2)  // chunk 0: the fp8 K walk
          ASSERT_EQ(R::step(base + R::at(r, c), dr, dc), base + R::at(r + dr, c + dc))
              << "row " << r << " chunk " << c << " step " << dr << ", " << dc;
}
TEST(CudaFlashHost, SharedRowsSwizzleInvariants) {
  using cuda_flash::SmemRows;
  static_assert(SmemRows<256>::kSpan == 8 && SmemRows<192>::kSpan == 4 &&
                SmemRows<96>::kSpan == 2 && SmemRows<160>::kSpan == 2 &&
                SmemRows<224>::kSpan == 2 && !SmemRows<64>::kSwizzled && !SmemRows<80>::kSwizzled &&
                !SmemRows<320>::kSwizzled && !SmemRows<448>::kSwizzled &&
                !SmemRows<192, false>::kSwizzled);
  check_smem_rows<64>();    // fp8 head 64
  check_smem_rows<80>();    // fp8 head 80
  check_smem_rows<96>();    // fp8 head 96
  check_smem_rows<128>();   // 16-bit head 64, fp8 head 128
  check_smem_rows<160>();   // 16-bit head 80, fp8 head 160
  check_smem_rows<192>();   // 16-bit head 96, fp8 head 192
  check_smem_rows<224>();   // fp8 head 224
  check_smem_rows<256>();   // 16-bit head 128, fp8 head 256
  check_smem_rows<320>();   // 16-bit head 160
  check_smem_rows<384>();   // 16-bit head 192
  check_smem_rows<448>();   // 16-bit head 224
  check_smem_rows<512>();   // 16-bit head 256
  check_smem_rows<1024>();  // 16-bit head 512
}

// The warp-pair form's split of V (tiles.hpp pair_chunk), at every manifest pair that takes it:
// the two warps' n8 O tiles cover each 16-byte chunk of V's rows exactly once, each even tile
// and the next are one ldmatrix's two chunks (c, c + 1), and inside the 64-dim groups a tile's
// chunk less the warp's 4 h shares no bit with a lane's own chunk bits (0 and 2: lanes 16..31
// take c + 1, warp 1 takes + 4), which SmemRows::step's XOR needs on swizzled rows.
TEST(CudaFlashHost, WarpPairSplitsEveryChunkOfV) {
  std::vector<int> heads_v;
  for (auto [qk, v] : cuda_flash::kFlashHeadPairs) {
    if (!cuda_flash::separate_kv(qk, v, false, false)) continue;
    heads_v.push_back(v);
    const int tiles = v / 16;  // a warp's n8 O tiles: half of V's head
    std::vector<int> seen(size_t(v / 8), 0);
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < tiles; ++j) {
        const int c = cuda_flash::pair_chunk(tiles, j, h);
        ASSERT_GE(c, 0) << qk << "/" << v << " warp " << h << " tile " << j;
        ASSERT_LT(c, v / 8) << qk << "/" << v << " warp " << h << " tile " << j;
        ++seen[size_t(c)];
        if (j % 2 == 1)
          EXPECT_EQ(c, cuda_flash::pair_chunk(tiles, j - 1, h) + 1) << qk << "/" << v << " " << j;
        if (j < cuda_flash::pair_group_tiles(tiles) && j % 2 == 0)
          EXPECT_EQ((c - 4 * h) & 5, 0) << qk << "/" << v << " warp " << h << " tile " << j;
      }
    for (int c = 0; c < v / 8; ++c)
      EXPECT_EQ(seen[size_t(c)], 1) << qk << "/" << v << " chunk " << c;
  }
  // 160 and 224 take the 16-dim tail; 192/128 and 256 whole groups only.
  EXPECT_EQ(heads_v, (std::vector<int>{160, 192, 224, 256, 128}));
}

// Which cache takes a plan's paged split count (tiles.hpp takes_paged_count): 16-bit pages that
// hold whole tiles of the plan's form; fp8 pages that hold whole fp8 decode tiles (128 keys at
// head 128, 64 at 256), and at no other head.
TEST(CudaFlashHost, PagedCountByCacheKind) {
  namespace cf = cuda_flash;
  EXPECT_TRUE(cf::takes_paged_count(false, 128, 128, 64, 64));
  EXPECT_TRUE(cf::takes_paged_count(false, 128, 128, 128, 64));
  EXPECT_FALSE(cf::takes_paged_count(false, 128, 128, 16, 64));
  EXPECT_TRUE(cf::takes_paged_count(true, 128, 128, 128, 64));
  EXPECT_TRUE(cf::takes_paged_count(true, 128, 128, 256, 64));
  EXPECT_FALSE(cf::takes_paged_count(true, 128, 128, 64, 64));  // half an fp8 tile a page
  EXPECT_FALSE(cf::takes_paged_count(true, 128, 128, 16, 64));
  EXPECT_TRUE(cf::takes_paged_count(true, 256, 256, 64, 32));
  EXPECT_FALSE(cf::takes_paged_count(true, 256, 256, 16, 32));
  for (int head : {64, 80, 96, 160, 192, 224})
    for (int block : {16, 64, 128, 256})
      EXPECT_FALSE(cf::takes_paged_count(true, head, head, block, 64)) << head << " " << block;
}

// When the decode form asks for its shared-memory floor (two CTAs per SM), at the H200's 132
// SMs and the shapes session 46 measured both ways (tiles.hpp decode_floor).
TEST(CudaFlashHost, DecodeFloorByGrid) {
  namespace cf = cuda_flash;
  auto per_sm = [](int head, bool fp8) {
    return cf::ctas_per_sm(227 * 1024, cf::flash_smem_bytes(head, head, fp8, true) +
                                           cf::flash_static_smem_bytes(head, head, fp8, true));
  };
  ASSERT_EQ(per_sm(64, true), 4);
  ASSERT_EQ(per_sm(96, true), 3);
  ASSERT_EQ(per_sm(128, true), 2);
  ASSERT_EQ(per_sm(64, false), 4);
  ASSERT_EQ(per_sm(80, false), 3);
  ASSERT_EQ(per_sm(96, false), 2);
  // Head 64: 32/8 at 1x32k and 16x8k (256 CTAs) keep it; 64x4k (512), 256x2k (2048) and
  // Whisper's 20/20 over 1500 keys (960 CTAs at 3 splits, 1280, 5120) run four per SM.
  EXPECT_TRUE(cf::decode_floor(256, 132, per_sm(64, true)));
  for (int64_t ctas : {512, 960, 1280, 2048, 5120})
    EXPECT_FALSE(cf::decode_floor(ctas, 132, per_sm(64, true))) << ctas;
  // Three per SM: 512 CTAs leave a last wave of one CTA per SM; 2048 fill theirs.
  EXPECT_TRUE(cf::decode_floor(256, 132, per_sm(96, true)));
  EXPECT_TRUE(cf::decode_floor(512, 132, per_sm(96, true)));
  EXPECT_FALSE(cf::decode_floor(2048, 132, per_sm(96, true)));
  // Two per SM already (fp8 head 128 is built with the floor): nothing to ask for.
  EXPECT_TRUE(cf::decode_floor(4096, 132, per_sm(128, true)));
  EXPECT_TRUE(cf::decode_floor(4096, 132, per_sm(96, false)));
}

// Early copies (tiles.hpp early_copies_pay) at the H100's 132 SMs, two CTAs per SM: 1x32k's
// 256 CTAs (32/4 at 64 splits, 32/8 at 32) and larger uniform grids copy early; 32/4's 128 CTAs
// at 32 splits and a ragged plan do not.
TEST(CudaFlashHost, EarlyCopiesByGrid) {
  namespace cf = cuda_flash;
  for (int64_t ctas : {256, 512, 1024, 2048}) EXPECT_TRUE(cf::early_copies_pay(ctas, 264, false));
  EXPECT_FALSE(cf::early_copies_pay(128, 264, false));
  EXPECT_FALSE(cf::early_copies_pay(132, 264, false));
  EXPECT_FALSE(cf::early_copies_pay(1024, 264, true));
}

// The decode form's reach: 16-bit caches up to head 128, fp8 caches up to 256 (64-key tiles past
// 128, so that each warp scores a 16-key slice), two CTAs per SM on SM90 from head 128 (four at
// head 64, three at 80 and 96: fp8_decode_min_smem), and a CTA fits SM80's 163 KiB.
TEST(CudaFlashHost, DecodeFormHeadsByCacheKind) {
  namespace cf = cuda_flash;
  for (auto [qk, v] : cf::kFlashHeadPairs) {
    const int h = std::max(qk, v);
    EXPECT_EQ(cf::has_decode_form(qk, v, false), h <= 128) << qk << "/" << v;
    EXPECT_EQ(cf::has_decode_form(qk, v, true), h <= 256) << qk << "/" << v;
    if (h > 256) continue;
    EXPECT_EQ(cf::tile_keys(qk, v, true, true), h <= 128 ? 128 : 64) << qk << "/" << v;
    const int smem =
        cf::flash_smem_bytes(qk, v, true, true) + cf::flash_static_smem_bytes(qk, v, true, true);
    EXPECT_EQ(cf::ctas_per_sm(227 * 1024, smem), h >= 128 ? 2
                                                 : h > 64 ? 3
                                                          : 4)
        << qk << "/" << v << ": " << smem << " bytes";
    EXPECT_LE(smem, 163 * 1024) << qk << "/" << v;
  }
  // Where the 16-bit plan runs a prefill form, fp8 caches take the decode form: heads 129..256
  // up to 16 packed rows (16-bit caches have no decode form there), heads up to 128 for 17..32
  // rows (speculative decodes; up to 16 the 16-bit decode form already runs); never head 512.
  for (auto [qk, v] : cf::kFlashHeadPairs) {
    const int h = std::max(qk, v);
    const std::string hs = std::to_string(qk) + "/" + std::to_string(v);
    for (int rows : {1, 16, 17, 32, 33, 64})
      EXPECT_EQ(cf::fp8_side_decode(qk, v, rows),
                h <= 128 ? rows > 16 && rows <= 32 : h <= 256 && rows <= 16)
          << hs << " rows " << rows;
  }
}

// The split heuristic: one split once the CTAs fill the GPU, never an empty split (the kernel's
// per-split share is ceil(tiles / splits)), at least two tiles per split, and the counts the
// H200 A/B runs kept (132 SMs, two decode CTAs per SM, 64-key tiles; tiles.hpp): 1x32k 32 splits
// for 8 KV heads and 64 (not 63) for 4; 1x8k 16 for 8 and 32 for 4 (one short CTA per SM);
// 16x8k 2 for 8 and 4 for 4; 1x128k 33 for 8 and 64 for 4 (no long lone CTAs); 24x2k one for 8
// (no second wave of splits at a short context). 24x64k keeps the critical path's four splits
// in three waves (not measured).
TEST(CudaFlashHost, SplitHeuristicNeverLeavesASplitEmpty) {
  using cuda_flash::num_splits_heuristic;
  EXPECT_EQ(num_splits_heuristic(8, 512, 132, 2), 32);
  EXPECT_EQ(num_splits_heuristic(4, 512, 132, 2), 64);
  EXPECT_EQ(num_splits_heuristic(8, 128, 132, 2), 16);
  EXPECT_EQ(num_splits_heuristic(4, 128, 132, 2), 32);
  EXPECT_EQ(num_splits_heuristic(128, 128, 132, 2), 2);
  EXPECT_EQ(num_splits_heuristic(64, 128, 132, 2), 4);
  EXPECT_EQ(num_splits_heuristic(8, 2048, 132, 2), 33);
  EXPECT_EQ(num_splits_heuristic(4, 2048, 132, 2), 64);
  EXPECT_EQ(num_splits_heuristic(192, 32, 132, 2), 1);
  EXPECT_EQ(num_splits_heuristic(192, 1024, 132, 2), 4);
  EXPECT_EQ(num_splits_heuristic(512, 64, 132, 2), 1);
  // Lone CTAs over pages that hold whole 16-bit tiles run up to 16 tiles: 1x32k 32/4 in 32
  // splits (one CTA per SM) instead of 64; 32/8 and 1x128k keep their counts.
  using cuda_flash::kLoneCtaTilesPaged;
  EXPECT_EQ(num_splits_heuristic(4, 512, 132, 2, kLoneCtaTilesPaged), 32);
  EXPECT_EQ(num_splits_heuristic(8, 512, 132, 2, kLoneCtaTilesPaged), 32);
  EXPECT_EQ(num_splits_heuristic(4, 2048, 132, 2, kLoneCtaTilesPaged), 64);
  for (int64_t ctas : {1, 3, 4, 7, 8, 32, 100, 211, 212}) {
    for (int tiles : {1, 3, 4, 5, 16, 79, 128, 511, 512, 2048, 100000}) {
      const int s = num_splits_heuristic(ctas, tiles, 132, 2);
      ASSERT_GE(s, 1);
      ASSERT_LE(s, cuda_flash::kMaxSplits);
      if (s == 1) continue;
      const int per = (tiles + s - 1) / s;
      EXPECT_GE(per, 2) << ctas << " CTAs, " << tiles << " tiles";
      EXPECT_LT(int64_t(per) * (s - 1), tiles)
          << "empty split: " << ctas << " CTAs, " << tiles << " tiles, " << s << " splits";
      EXPECT_LT(ctas * 10, 132 * 2 * 8) << "split although the CTAs fill the GPU";
    }
  }
}

// Forms without per-sequence counts: a skewed batch takes the model's uniform count, uniform and
// near-uniform batches keep the heuristic's, and the count keeps the grid within CUDA's.
TEST(CudaFlashHost, SkewedBatchSplitsUniformlyWithoutRaggedForm) {
  using cuda_flash::skewed_uniform_splits;
  std::vector<int> tiles(64, 16);
  tiles[0] = 1024;  // 1x64k + 63x1k at 64-key tiles: 512 CTAs at 8 KV heads
  const int h = cuda_flash::num_splits_heuristic(512, 1024, 132, 1);
  ASSERT_EQ(h, 1);
  const int n = skewed_uniform_splits(tiles.data(), 64, 8, 132, 1, h);
  EXPECT_GT(n, 4);
  EXPECT_LE(n, 1024 / 16) << "a split of the long sequence keeps a short one's length or more";
  EXPECT_EQ(skewed_uniform_splits(std::vector<int>(64, 64).data(), 64, 8, 132, 1, 1), 1);
  std::vector<int> near(64);
  for (int i = 0; i < 64; ++i) near[i] = 60 + i % 5;
  EXPECT_EQ(skewed_uniform_splits(near.data(), 64, 8, 132, 1, 1), 1);
  // 2x16k + 126x512 at 64-key tiles, 32/8, one CTA per SM (the Hopper form at head 256): 2 splits
  // ran 1.58x faster than 1 (cuda_s21_r4).
  std::vector<int> two_long(128, 8);
  two_long[0] = two_long[1] = 256;
  EXPECT_EQ(skewed_uniform_splits(two_long.data(), 128, 8, 132, 1, 1), 2);
  // The model would split 1x60000 tiles among 20000 one-tile sequences further, but num_seqs x
  // splits is the grid's z extent.
  std::vector<int> many(20000, 1);
  many[0] = 60000;
  EXPECT_EQ(skewed_uniform_splits(many.data(), 20000, 1, 132, 1, 1), 65535 / 20000);
}

// A split count per sequence only where one count for all would leave a long sequence's CTAs
// running alone: 1x64k among 63x1k (32/8, 64-key tiles, 132 SMs) splits the long one, never a
// short one; uniform and near-uniform batches keep the uniform plan.
// A chunked-prefill batch's parts: decodes then chunks, or the reverse, make two; any other
// order, and one kind, one; sequences without query rows go with the next run.
TEST(CudaFlashHost, BatchPartsSplitDecodesFromChunks) {
  using Runs = std::vector<std::pair<int, int>>;
  // Every sequence holds 100 keys of one byte each, no least decode run: the rows decide.
  auto parts = [](const std::vector<int>& q_lens, int group) {
    std::vector<int32_t> cu(1, 0);
    for (int q : q_lens) cu.push_back(cu.back() + q);
    const std::vector<int32_t> used(q_lens.size(), 100);
    return cuda_flash::batch_parts(cu.data(), used.data(), int(q_lens.size()), group,
                                   cuda_flash::kBlockMDecode, 1, 0);
  };
  EXPECT_EQ(parts({1, 1, 1, 512}, 4), (Runs{{0, 3}, {3, 4}}));  // vLLM's order
  EXPECT_EQ(parts({300, 1, 1}, 8), (Runs{{0, 1}, {1, 3}}));     // chunks first
  EXPECT_EQ(parts({4, 4, 5}, 4), (Runs{{0, 2}, {2, 3}}));       // 16 rows decode, 20 do not
  EXPECT_EQ(parts({1, 1, 1}, 8), (Runs{{0, 3}}));
  EXPECT_EQ(parts({64, 300}, 1), (Runs{{0, 2}}));
  EXPECT_EQ(parts({1, 40, 1}, 4), (Runs{{0, 3}}));  // decode, chunk, decode: one part
  EXPECT_EQ(parts({0, 1, 1, 0, 37, 0}, 4), (Runs{{0, 3}, {3, 6}}));
  EXPECT_EQ(parts({0, 0}, 4), (Runs{{0, 2}}));
  EXPECT_EQ(parts({}, 4), (Runs{{0, 0}}));
  // A decode run reading less than the least stays in the one launch, first or last; the chunks'
  // keys do not count.
  const std::vector<int32_t> cu = {0, 1, 2, 514}, used = {1000, 3000, 9000};
  auto least = [&](int64_t min_bytes, bool decodes_first) {
    const std::vector<int32_t> c = decodes_first ? cu : std::vector<int32_t>{0, 512, 513, 514};
    const std::vector<int32_t> u = decodes_first ? used : std::vector<int32_t>{9000, 1000, 3000};
    return cuda_flash::batch_parts(c.data(), u.data(), 3, 8, cuda_flash::kBlockMDecode, 1024,
                                   min_bytes);
  };
  EXPECT_EQ(least(4000 * 1024, true), (Runs{{0, 2}, {2, 3}}));
  EXPECT_EQ(least(4000 * 1024 + 1, true), (Runs{{0, 3}}));
  EXPECT_EQ(least(4000 * 1024, false), (Runs{{0, 1}, {1, 3}}));
  EXPECT_EQ(least(4000 * 1024 + 1, false), (Runs{{0, 3}}));
}

TEST(CudaFlashHost, RaggedSplitsOnlyForUnequalLengths) {
  using cuda_flash::ragged_splits;
  std::vector<int> tiles(64, 16);
  tiles[0] = 1024;
  const auto r = ragged_splits(tiles.data(), 64, 8, 132, 2, 1);
  ASSERT_GT(r.chunk_tiles, 1);
  const int long_splits = (1024 + r.chunk_tiles - 1) / r.chunk_tiles;
  EXPECT_GT(long_splits, 4);
  EXPECT_EQ(r.max_splits, long_splits);
  EXPECT_EQ(r.items, 63 + long_splits);
  EXPECT_GE(r.chunk_tiles, 16) << "a short sequence would split";
  EXPECT_EQ(ragged_splits(std::vector<int>(64, 64).data(), 64, 8, 132, 2, 1).chunk_tiles, 0);
  std::vector<int> near(64);
  for (int i = 0; i < 64; ++i) near[i] = 60 + i % 5;
  EXPECT_EQ(ragged_splits(near.data(), 64, 8, 132, 2, 1).chunk_tiles, 0);
  // A long and a short sequence: the uniform count already splits the long one in one wave; a
  // count per sequence saved little (1x32k + 1x1k 32/4 under the first threshold: 0.94-1.05x,
  // cuda_s18_r3), so the plan keeps the uniform count.
  const int pair[] = {512, 16};
  EXPECT_EQ(ragged_splits(pair, 2, 4, 132, 2, cuda_flash::num_splits_heuristic(8, 512, 132, 2))
                .chunk_tiles,
            0);
  // Two long sequences a few tiles apart: the uniform count's split of both.
  const int two[] = {512, 480};
  EXPECT_EQ(ragged_splits(two, 2, 8, 132, 2, cuda_flash::num_splits_heuristic(16, 512, 132, 2))
                .chunk_tiles,
            0);
  // Whatever the lengths: counts within kMaxSplits, the items their sum, the grid within CUDA's.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + int(rng() % 300);
    std::vector<int> t(n);
    for (auto& x : t) x = rng() % 8 == 0 ? int(rng() % 4096) : int(rng() % 64);
    const auto q = ragged_splits(t.data(), n, 1 + int(rng() % 8), 132, 2, 1);
    if (!q.chunk_tiles) continue;
    int items = 0, most = 1;
    for (int x : t) {
      const int c = cuda_flash::ragged_count(x, q.chunk_tiles);
      ASSERT_LE(c, cuda_flash::kMaxSplits);
      items += c;
      most = std::max(most, c);
    }
    EXPECT_EQ(q.items, items);
    EXPECT_EQ(q.max_splits, most);
    EXPECT_GE(q.chunk_tiles, 2);
  }
}

TEST(CudaFlashDeclaration, DerivedFromManifest) {
  const Capabilities& caps = cuda_flash_capabilities();
  std::vector<int> heads;
  for (const auto& f : cuda_flash::kFlashManifest) heads.push_back(f.head_qk);
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  EXPECT_EQ(caps.head_sizes.sizes, heads);
  DeviceInfo h100 = device_from_name("h100");
  LayerSpec spec;
  spec.num_heads = 32;
  spec.num_kv_heads = 8;
  spec.head_size = spec.head_size_v = 128;
  EXPECT_TRUE(invalid_reasons(caps, spec, h100).empty());
  spec.head_size = spec.head_size_v = 100;  // never built
  EXPECT_FALSE(invalid_reasons(caps, spec, h100).empty());
  spec.head_size = spec.head_size_v = 128;
  spec.dtype = DType::kBFloat16;
  spec.kv_cache_dtype = KvCacheDType::kFloat16;  // 16-bit cache of another dtype: no kernel
  EXPECT_FALSE(invalid_reasons(caps, spec, h100).empty());
  spec.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_TRUE(invalid_reasons(caps, spec, h100).empty());
  ASSERT_FALSE(cuda_flash_generations().empty());
  EXPECT_EQ(cuda_flash_generations()[0].name, "v2");
}

// CUDA_MLA states its manifest: head 576 / 512 over MLA layers only, both dtypes, 16-bit and fp8
// latent caches; a 16-bit cache of the other dtype has no kernel.
// mm_prefix layers are declared at the heads whose prefill form has a kMm kernel, under v2 and v3,
// and refused elsewhere with the combination rule's reason; CUDA_MLA declares none.
TEST(CudaFlashDeclaration, PrefixLmAtTheBuiltHeads) {
  const DeviceInfo h100 = device_from_name("h100");
  LayerSpec spec;
  spec.num_heads = 8;
  spec.num_kv_heads = 1;
  spec.mm_prefix = true;
  for (const KernelGeneration& g : cuda_flash_generations()) {
    if (!g.built) continue;
    for (int head : {64, 128, 256}) {
      spec.head_size = spec.head_size_v = head;
      const auto reasons = invalid_reasons(g.caps, spec, h100);
      if (cuda_flash::mm_prefix_built(head, head)) {
        EXPECT_TRUE(reasons.empty()) << g.name << " head " << head;
      } else {
        ASSERT_EQ(reasons.size(), 1u) << g.name << " head " << head;
        EXPECT_EQ(reasons[0], "mm_prefix with head_size 64/64 not built (heads 128, 256)");
      }
    }
  }
  spec.head_size = spec.head_size_v = 128;
  spec.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_TRUE(invalid_reasons(cuda_flash_capabilities(), spec, h100).empty());
  EXPECT_FALSE(cuda_mla_capabilities().mm_prefix);
}

// Chunked local layers: CUDA_FLASH (every built generation) takes them, as whole blocks, but
// not with PrefixLM ranges nor on encoder layers (the cu_seqlens_k form); CUDA_MLA refuses.
TEST(CudaFlashDeclaration, ChunkedLocalLayers) {
  const DeviceInfo h100 = device_from_name("h100");
  LayerSpec spec;
  spec.num_heads = 40;
  spec.num_kv_heads = 8;
  spec.head_size = spec.head_size_v = 128;
  spec.attention_chunk_size = 8192;
  for (const KernelGeneration& g : cuda_flash_generations()) {
    if (!g.built) continue;
    EXPECT_TRUE(g.caps.chunked_local && g.caps.chunk_in_whole_blocks) << g.name;
    EXPECT_TRUE(invalid_reasons(g.caps, spec, h100).empty()) << g.name;
    LayerSpec mm = spec;
    mm.mm_prefix = true;
    EXPECT_EQ(invalid_reasons(g.caps, mm, h100),
              std::vector<std::string>{"mm_prefix with chunked local attention not supported"})
        << g.name;
    LayerSpec enc = spec;
    enc.attn_type = AttentionType::kEncoder;
    EXPECT_EQ(invalid_reasons(g.caps, enc, h100),
              std::vector<std::string>{"chunked local attention on encoder layers not supported"})
        << g.name;
  }
  EXPECT_FALSE(cuda_mla_capabilities().chunked_local);
}

TEST(CudaFlashDeclaration, MlaDerivedFromManifest) {
  const Capabilities& caps = cuda_mla_capabilities();
  EXPECT_EQ(caps.head_sizes.sizes, std::vector<int>{576});
  EXPECT_EQ(caps.mla, MlaSupport::kMlaOnly);
  EXPECT_EQ(cuda_mla::kMlaManifest.size(), caps.dtypes.size() * 2);
  LayerSpec spec;
  spec.num_heads = 128;
  spec.num_kv_heads = 1;
  spec.mla = MlaDims{512, 128, 64, 128, 1536, false};
  spec.head_size = 576;
  spec.head_size_v = 512;
  const DeviceInfo h200 = device_from_name("h200");
  EXPECT_TRUE(invalid_reasons(caps, spec, h200).empty());
  spec.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_TRUE(invalid_reasons(caps, spec, h200).empty());
  spec.kv_cache_dtype = KvCacheDType::kFloat16;  // bf16 model over an fp16 cache
  EXPECT_FALSE(invalid_reasons(caps, spec, h200).empty());
}

// v3's declaration states the Hopper prefill form's layers exactly (tiles.hpp
// hopper_prefill_head, 16-bit and fp8 caches, SM90 only) and is built; the selector gives every
// other layer on an H200 to v2 with v3's reasons.
TEST(CudaFlashDeclaration, V3IsTheHopperPrefillForm) {
  const auto& gens = cuda_flash_generations();
  ASSERT_EQ(gens.size(), 3u);
  const KernelGeneration& v3 = gens[1];
  EXPECT_EQ(v3.name, "v3");
  EXPECT_TRUE(v3.built);
  EXPECT_EQ(v3.caps.min_compute_capability, 90);
  EXPECT_EQ(v3.caps.max_compute_capability, 90);
  std::vector<int> heads;
  for (int h : gens[0].caps.head_sizes.sizes)
    if (cuda_flash::hopper_prefill_head(h, h)) heads.push_back(h);
  EXPECT_EQ(v3.caps.head_sizes.sizes, heads);
  EXPECT_EQ(heads, (std::vector<int>{64, 80, 96, 128, 160, 192, 224, 256}));
  EXPECT_EQ(v3.caps.asymmetric_head_sizes, (std::vector<std::pair<int, int>>{{192, 128}}));
  EXPECT_EQ(v3.caps.kv_cache_dtypes, gens[0].caps.kv_cache_dtypes);  // 16-bit and fp8
  // Head 64 takes the form over long sequences only; the wider heads always.
  // Head 64: from 4k keys under a causal mask, 1k without; a window narrower than the sequence
  // counts its CTAs' keys (128 rows: 128 tokens at MHA, 64 at GQA 2) from 1k under either mask.
  namespace cf = cuda_flash;
  const int causal_min = cf::kHopperHead64MinKeysCausal, min_keys = cf::kHopperHead64MinKeys;
  EXPECT_FALSE(cf::hopper_prefill_takes(64, 64, causal_min - 1, 1, true, -1, -1));
  EXPECT_TRUE(cf::hopper_prefill_takes(64, 64, causal_min, 1, true, -1, -1));
  EXPECT_FALSE(cf::hopper_prefill_takes(64, 64, min_keys - 1, 1, false, -1, -1));
  EXPECT_TRUE(cf::hopper_prefill_takes(64, 64, min_keys, 1, false, -1, -1));
  EXPECT_FALSE(cf::hopper_prefill_takes(64, 64, 8192, 1, false, 64, 64));     // 128 + 128 keys
  EXPECT_FALSE(cf::hopper_prefill_takes(64, 64, 1 << 20, 2, true, 127, -1));  // 64 + 127
  EXPECT_TRUE(cf::hopper_prefill_takes(64, 64, 8192, 2, true, min_keys - 64, -1));
  EXPECT_FALSE(cf::hopper_prefill_takes(64, 64, 8192, 2, true, min_keys - 65, -1));
  // A window as wide as the sequence bounds nothing: the sequence's rule.
  EXPECT_FALSE(cf::hopper_prefill_takes(64, 64, 2000, 1, true, 4000, -1));
  EXPECT_TRUE(cf::hopper_prefill_takes(64, 64, 8192, 1, false, 64, -1));  // one side unbounded
  EXPECT_TRUE(cf::hopper_prefill_takes(128, 128, 1, 1, true, 0, -1));
  EXPECT_TRUE(cf::hopper_prefill_takes(256, 256, 1, 1, false, 0, 0));
  EXPECT_TRUE(cf::hopper_prefill_takes(192, 128, 1, 1, false, -1, -1));  // MLA's prefill
  EXPECT_FALSE(cf::hopper_prefill_head(128, 192));  // O leaves through Q's tile
  EXPECT_TRUE(cf::hopper_prefill_takes(96, 96, 1, 1, true, -1, -1));
  EXPECT_FALSE(cf::hopper_prefill_takes(512, 512, 1 << 20, 1, false, -1, -1));
  // Tiles of whole 64-element column blocks: heads 80 and 96 laid out as 128 (128-key tiles),
  // 160 as 192, 224 as 256 (64-key tiles).
  EXPECT_EQ(cf::hopper_layout_head(96), 128);
  EXPECT_EQ(cf::hopper_layout_head(160), 192);
  EXPECT_EQ(cf::hopper_layout_head(224), 256);
  EXPECT_EQ(cf::hopper_prefill_tile_keys(80, 80), 128);
  EXPECT_EQ(cf::hopper_prefill_tile_keys(160, 160), 64);
  EXPECT_EQ(cf::hopper_raw_slots(192, 192), 3);
  EXPECT_EQ(cf::hopper_raw_slots(224, 224), 1);

  LayerSpec spec;
  spec.num_heads = 32;
  spec.num_kv_heads = 8;
  spec.head_size = 128;
  const DeviceInfo h200 = device_from_name("h200");
  const std::optional<std::string> none;
  EXPECT_EQ(resolve_generation(gens, "CUDA_FLASH", spec, h200, none).variant, "v3");
  EXPECT_EQ(resolve_generation(gens, "CUDA_FLASH", spec, device_from_name("a100"), none).variant,
            "v2");
  for (auto [head, kv] : {std::pair{128, KvCacheDType::kFp8E4M3},
                          {64, KvCacheDType::kFp8E5M2},
                          {96, KvCacheDType::kAuto},
                          {224, KvCacheDType::kFp8E4M3},
                          {256, KvCacheDType::kFp8E4M3}}) {
    spec.head_size = head;
    spec.kv_cache_dtype = kv;
    EXPECT_EQ(resolve_generation(gens, "CUDA_FLASH", spec, h200, none).variant, "v3") << head;
  }
  spec.head_size = 512;
  spec.kv_cache_dtype = KvCacheDType::kAuto;
  const VariantChoice v = resolve_generation(gens, "CUDA_FLASH", spec, h200, none);
  EXPECT_EQ(v.variant, "v2");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].message.find("head_size"), std::string::npos) << v.warnings[0].message;
}

TEST(CudaFlashDeclaration, BuildReportsKernels) {
#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
  EXPECT_TRUE(cuda_flash_kernels_built());
#else
  EXPECT_FALSE(cuda_flash_kernels_built());
  try {
    make_cuda_flash_backend();
    ADD_FAILURE() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("not in this build"), std::string::npos);
  }
#endif
}

#if defined(ATTNKIT_CUDA_FLASH_KERNELS)

// A softcap of +-inf, NaN or below 0 is refused before any launch, as on the CPU backends (0 is
// off and runs); the output keeps its poison.
TEST_F(CudaFlash, RunRejectsNonFiniteOrNegativeSoftcap) {
  Case c{.name = "softcap check", .head = 128, .hq = 2, .hkv = 1, .seqs = {{1, 10}}};
  PreparedCase pc(c, 21);
  Problem& P = pc.P;
  auto& be = pc.be;
  DeviceRun& r = pc.r;
  for (float cap : {INFINITY, -INFINITY, NAN, -1.f}) {
    AttentionArgs a = r.args;
    a.layer.logits_soft_cap = cap;
    try {
      be->run(a, nullptr);
      ADD_FAILURE() << "accepted logits_soft_cap " << cap;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("logits_soft_cap must be finite and >= 0"),
                std::string::npos)
          << e.what();
    }
  }
  ck(cudaDeviceSynchronize());
  for (uint16_t b : download<uint16_t>(r.out, r.out.n / 2))
    ASSERT_EQ(b, 0x7fff) << "a rejected run wrote its output";
  be->run(r.args, nullptr);  // softcap 0: off
  ck(cudaDeviceSynchronize());
  compare(P, reference(P), r.out, r.lse, "softcap 0 after the rejected ones");
}

// write_kv of fp32 rows (every element 1.5), one per slot of `slot_list`, into a bf16 cache of
// one block of kBlock slots and one KV head whose K and V tensors start as 0x5a bytes.
struct OneBlockWrite {
  static constexpr int kD = 64, kBlock = 4;
  static constexpr size_t kBytes = size_t(kBlock) * kD * 2;  // one tensor
  DevBuf rows, slots, k{kBytes}, v{kBytes};
  KvWriteArgs w;
  explicit OneBlockWrite(const std::vector<int64_t>& slot_list)
      : rows(upload(std::vector<float>(slot_list.size() * kD, 1.5f))), slots(upload(slot_list)) {
    ck(cudaMemset(k.p, 0x5a, kBytes));
    ck(cudaMemset(v.p, 0x5a, kBytes));
    w.k = w.v = rows.p;
    w.dtype = DType::kFloat32;
    w.num_tokens = int(slot_list.size());
    w.k_stride_token = w.v_stride_token = kD;
    w.k_stride_head = w.v_stride_head = kD;
    w.slot_mapping = slots.as<int64_t>();
    w.cache.k = k.p;
    w.cache.v = v.p;
    w.cache.dtype = KvCacheDType::kBFloat16;
    w.cache.num_blocks = 1;
    w.cache.block_size = kBlock;
    w.cache.num_kv_heads = 1;
    w.cache.head_size = w.cache.head_size_v = kD;
    w.cache.stride_token = w.cache.v_stride_token = kD * 2;
    w.cache.stride_head = w.cache.v_stride_head = int64_t(kBlock) * kD * 2;
    w.cache.stride_block = w.cache.v_stride_block = int64_t(kBlock) * kD * 2;
  }
};

// write_kv with v == nullptr on a cache that has V is refused (it would write K alone); a cache
// without V (the MLA latent form, cache.v == nullptr) takes k alone.
TEST_F(CudaFlash, WriteKvRejectsNullVOnACacheWithV) {
  OneBlockWrite ob({0, 1, 2, 3});
  KvWriteArgs& w = ob.w;
  const DevBuf &k = ob.k, &v = ob.v;
  const size_t bytes = OneBlockWrite::kBytes;
  w.v = nullptr;
  auto be = make_cuda_flash_backend();
  try {
    be->write_kv(w, nullptr);
    ADD_FAILURE() << "accepted v == nullptr on a cache with V";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("v must be given exactly when the cache has a V tensor "
                                         "(got v null, cache v set"),
              std::string::npos)
        << e.what();
  }
  ck(cudaDeviceSynchronize());
  for (const DevBuf* b : {&k, &v})
    for (uint8_t x : download<uint8_t>(*b, bytes)) ASSERT_EQ(x, 0x5a) << "a rejected write wrote";
  w.cache.v = nullptr;  // no V tensor: K alone is the whole write
  be->write_kv(w, nullptr);
  ck(cudaDeviceSynchronize());
  for (uint16_t x : download<uint16_t>(k, bytes / 2)) ASSERT_EQ(x, float_to_bf16_bits(1.5f));
}

// Sets element i of a device array: a bad value the device checks must name.
template <typename T>
void set_on_device(const DevBuf& b, int i, T v) {
  ck(cudaMemcpy(b.as<T>() + i, &v, sizeof v, cudaMemcpyHostToDevice));
}
// Copies a host array over its device copy again (undoes set_on_device).
template <typename T>
void restore_on_device(const DevBuf& d, const std::vector<T>& h) {
  ck(cudaMemcpy(d.p, h.data(), d.n, cudaMemcpyHostToDevice));
}
// The device checks refuse `a`, naming `want`, and the refused run leaves the poisoned output
// as it was.
void expect_device_refusal(PreparedCase& pc, const AttentionArgs& a, const std::string& want) {
  pc.r.poison_out();
  try {
    pc.be->run(a, nullptr);
    ADD_FAILURE() << pc.P.c.name << ": accepted; expected " << want;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(want + " (device check)"), std::string::npos) << e.what();
  }
  ck(cudaDeviceSynchronize());
  for (uint16_t b : download<uint16_t>(pc.r.out, pc.r.out.n / 2))
    ASSERT_EQ(b, 0x7fff) << pc.P.c.name << ": a refused run wrote its output (" << want << ")";
}

// CudaFlashOptions::check_args: each rule of docs/semantics.md §6 on the device arrays, which no
// host plan sees, is refused before anything is launched, in the CPU backends' words and for the
// lowest sequence first; unused block-table entries may hold anything; a checked valid run
// matches the reference; a graph capture is refused; the layer's slopes and sinks, the cache's
// scales, PrefixLM ranges and write_kv's scales and slots likewise. CUDA_FLASH and CUDA_MLA.
TEST_F(CudaFlash, DeviceArgumentChecksNameTheBadEntry) {
  for (bool mla : {false, true}) {
    Case c{.name = mla ? "checked mla" : "checked flash",
           .hq = 8,
           .hkv = 2,
           .seqs = {{1, 40}, {3, 97}, {1, 1}},
           .check_args = true};
    if (mla) {
      c.head = 576;
      c.head_v = 512;
      c.hq = 16;
      c.hkv = 1;
      c.seqs = {{1, 40}, {2, 97}, {1, 1}};
      c.mla = true;
    }
    PreparedCase pc(c, 61);
    Problem& P = pc.P;
    DeviceRun& r = pc.r;
    const int W = P.bt_stride;  // entries a block-table row holds (97 keys read 7)
    auto set = [](const DevBuf& b, int i, int32_t v) { set_on_device(b, i, v); };
    auto restore = [&] {
      restore_on_device(P.dbt, P.bt);
      restore_on_device(P.dused, P.used);
      restore_on_device(P.dcu, P.cu);
    };
    auto refused = [&](const AttentionArgs& a, const std::string& want) {
      expect_device_refusal(pc, a, want);
      restore();
    };
    const std::string N = std::to_string(P.num_blocks), T = std::to_string(P.total_q);
    // Only the used entries are read: sequence 2 (one key) reads its first alone.
    set(P.dbt, 2 * W + 3, -5);
    pc.be->run(r.args, nullptr);
    ck(cudaDeviceSynchronize());
    compare(P, reference(P), r.out, r.lse, c.name + ", a garbage unused entry");
    restore();
    set(P.dbt, 2 * W, -1);
    set(P.dbt, 1 * W + 2, P.num_blocks);
    refused(r.args, "block_table[1][2] = " + N + " is outside [0, num_blocks = " + N + ")");
    set(P.dbt, 2 * W, -1);
    refused(r.args, "block_table[2][0] = -1 is outside [0, num_blocks = " + N + ")");
    set(P.dused, 1, -3);
    refused(r.args, "seqused_k[1] must be >= 0 (got -3)");
    set(P.dused, 1, 98);
    refused(r.args, "max_seqlen_k must be >= every seqused_k (sequence 1 has 98, max_seqlen_k 97)");
    AttentionArgs wide = r.args;
    wide.batch.max_seqlen_k = 1000;
    set(P.dused, 1, W * 16 + 1);
    refused(wide, "seqused_k[1] = " + std::to_string(W * 16 + 1) +
                      " exceeds the block-table row (block_table_stride " + std::to_string(W) +
                      " x block_size 16)");
    set(P.dcu, 0, 1);
    refused(r.args, "cu_seqlens_q[0] must be 0 (got 1)");
    set(P.dcu, 3, P.total_q + 1);
    refused(r.args, "cu_seqlens_q[num_seqs] must equal total_q (got " +
                        std::to_string(P.total_q + 1) + ", expected " + T + ")");
    set(P.dcu, 1, 5);  // sequence 0 has 5 rows (above the maximum), sequence 1 a negative count
    refused(r.args, "max_seqlen_q must be >= every q_len (sequence 0 has 5, max_seqlen_q " +
                        std::to_string(mla ? 2 : 3) + ")");
    set(P.dcu, 2, 0);
    refused(r.args, "cu_seqlens_q must be non-decreasing (sequence 1)");
    // A graph cannot capture the checks' sync.
    cudaStream_t st = nullptr;
    ck(cudaStreamCreate(&st));
    ck(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    try {
      pc.be->run(r.args, st);
      ADD_FAILURE() << c.name << ": a checked run was captured";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("a graph capture cannot hold"), std::string::npos)
          << e.what();
    }
    cudaGraph_t g = nullptr;
    ck(cudaStreamEndCapture(st, &g));
    if (g) cudaGraphDestroy(g);
    ck(cudaStreamDestroy(st));
    // The checked run after all of them.
    r.poison_out();
    pc.be->run(r.args, nullptr);
    ck(cudaDeviceSynchronize());
    compare(P, reference(P), r.out, r.lse, c.name + ", checked");
  }
  // The layer's slopes and sinks and the cache's scales (device arrays), walked before the batch
  // rules as the CPU checks walk them; a -inf sink is accepted and takes no weight.
  {
    Case c{.name = "checked values",
           .kv = KvCacheDType::kFp8E4M3,
           .gran = ScaleGranularity::kPerHead,
           .hq = 8,
           .hkv = 2,
           .seqs = {{1, 40}, {3, 97}},
           .alibi = true,
           .sinks = true,
           .check_args = true};
    PreparedCase pc(c, 63);
    Problem& P = pc.P;
    DeviceRun& r = pc.r;
    auto set = [](const DevBuf& b, int i, auto v) { set_on_device(b, i, v); };
    auto refused = [&](const std::string& want) {
      expect_device_refusal(pc, r.args, want);
      restore_on_device(P.dslopes, P.slopes);
      restore_on_device(P.dsinks, P.sinks);
      restore_on_device(P.dks, P.k_scale);
      restore_on_device(P.dvs, P.v_scale);
      restore_on_device(P.dused, P.used);
    };
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
    set(P.dslopes, 5, inf);
    set(P.dsinks, 1, nan);
    refused("alibi_slopes[5] must be finite (got inf)");
    set(P.dsinks, 1, nan);
    refused("sinks[1] must be finite or -inf (got nan)");
    set(P.dsinks, 7, inf);
    refused("sinks[7] must be finite or -inf (got inf)");
    set(P.dks, 1, 0.f);
    set(P.dvs, 0, -2.f);
    refused("kv.k_scale[1] must be finite and > 0 (got 0)");
    set(P.dvs, 0, -2.f);
    set(P.dused, 1, -3);  // a batch rule comes after the values
    refused("kv.v_scale[0] must be finite and > 0 (got -2)");
    P.sinks[2] = -inf;  // no weight: the reference without that head's sink
    restore_on_device(P.dsinks, P.sinks);
    r.poison_out();
    pc.be->run(r.args, nullptr);
    ck(cudaDeviceSynchronize());
    compare(P, reference(P), r.out, r.lse, c.name + ", a -inf sink");
  }
  // PrefixLM ranges (CUDA_FLASH), walked after every batch rule as the CPU checks walk them.
  {
    Case c{.name = "checked PrefixLM",
           .hq = 8,
           .hkv = 2,
           .seqs = {{40, 200}, {64, 64}},
           .mm = {{{30, 50}, {165, 180}}, {{0, 10}, {30, 50}}},
           .check_args = true};
    PreparedCase pc(c, 62);
    Problem& P = pc.P;
    DeviceRun& r = pc.r;
    auto set = [](const DevBuf& b, int i, int32_t v) { set_on_device(b, i, v); };
    auto refused = [&](const std::string& want) {
      expect_device_refusal(pc, r.args, want);
      restore_on_device(P.dmm_off, P.mm_off);
      restore_on_device(P.dmm_rng, P.mm_rng);
      restore_on_device(P.dused, P.used);
    };
    set(P.dmm_off, 0, 1);
    refused("mm_prefix_offsets[0] must be 0 (got 1)");
    set(P.dmm_off, 2, 3);
    refused(
        "mm_prefix_offsets[num_seqs] must equal the planned PrefixLM range count (got 3, "
        "expected 4)");
    set(P.dmm_off, 1, 3);  // sequence 0 takes sequence 1's first range, which starts at 0
    refused(
        "PrefixLM range [0, 10) of sequence 0 must be non-empty and start at or after the "
        "previous range's end (180)");
    set(P.dmm_rng, 7, 70);
    refused(
        "PrefixLM range [30, 70) of sequence 1 ends past its seqused_k (64): a chunk must not "
        "split a bidirectional range");
    set(P.dmm_rng, 1, 30);  // an empty range; a negative seqused_k is named before it
    set(P.dused, 1, -3);
    refused("seqused_k[1] must be >= 0 (got -3)");
    set(P.dmm_rng, 1, 30);
    refused(
        "PrefixLM range [30, 30) of sequence 0 must be non-empty and start at or after the "
        "previous range's end (0)");
    pc.be->run(r.args, nullptr);
    ck(cudaDeviceSynchronize());
    compare(P, reference(P), r.out, r.lse, c.name + ", checked");
  }
  // write_kv: a slot outside [-1, num_blocks x block_size) is refused and nothing is written.
  const int block = OneBlockWrite::kBlock;
  OneBlockWrite ob({0, -1, block});
  KvWriteArgs& w = ob.w;
  const DevBuf &k = ob.k, &v = ob.v;
  const size_t bytes = OneBlockWrite::kBytes;
  CudaFlashOptions opt;
  opt.check_args = true;
  auto be = make_cuda_flash_backend(opt);
  try {
    be->write_kv(w, nullptr);
    ADD_FAILURE() << "accepted slot " << block << " of a " << block << "-slot cache";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("slot_mapping[2] = 4 is outside [-1, 4) (device check)"),
              std::string::npos)
        << e.what();
  }
  ck(cudaDeviceSynchronize());
  // An fp8 cache's scales come before its slots (write_kv divides by them).
  {
    KvWriteArgs fp8 = w;
    const DevBuf scales = upload(std::vector<float>{0.5f, 0.f});
    fp8.cache.dtype = KvCacheDType::kFp8E4M3;
    fp8.cache.scale_granularity = ScaleGranularity::kPerTensor;
    fp8.cache.k_scale = scales.as<float>();
    fp8.cache.v_scale = scales.as<float>() + 1;
    try {
      be->write_kv(fp8, nullptr);
      ADD_FAILURE() << "accepted a zero V scale";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(
          std::string(e.what()).find("kv.v_scale[0] must be finite and > 0 (got 0) (device check)"),
          std::string::npos)
          << e.what();
    }
    ck(cudaDeviceSynchronize());
  }
  for (const DevBuf* b : {&k, &v})
    for (uint8_t x : download<uint8_t>(*b, bytes)) ASSERT_EQ(x, 0x5a) << "a refused write wrote";
  w.num_tokens = 2;  // slots 0 and -1 (skipped)
  be->write_kv(w, nullptr);
  ck(cudaDeviceSynchronize());
  EXPECT_EQ(download<uint16_t>(k, 1)[0], float_to_bf16_bits(1.5f));
}

#endif  // ATTNKIT_CUDA_FLASH_KERNELS

}  // namespace
}  // namespace attnkit
