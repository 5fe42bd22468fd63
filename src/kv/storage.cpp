// KV storage: the plan's tensors and per-layer scales behind an allocator, KvCacheView per layer,
// and the host block zeroer.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"

namespace attnkit {

namespace {

class HostKvAllocator final : public KvAllocator {
 public:
  // Every block is aligned to kAlign (enough for any vector load); larger requests are refused.
  // Allocations of kHostHugePageBytes and more get transparent huge pages where the kernel gives
  // them: a paged decode reads runs of a few KiB (one block of one KV head) all over the cache,
  // and on 4 KiB pages each run costs a page walk (two levels of them in a VM). CPU bench decode
  // over huge pages against 4 KiB ones, bf16 GQA 32/8 on a 2-vCPU VM, three alternating rounds:
  // page 64 11.2-15.5 -> 15.8-19.1 GB/s, page 128 14.3-16.4 -> 16.6-17.7, page 16 14.5-16.6 ->
  // 15.6-17.1 (results/cpu_2026-12-01_s23_hugepages_ab.jsonl); on the H200 host's 16 cores, two
  // rounds, pages 16-128 1.04-1.26x a round (results/cuda_s23_r2_cpu_decode_huge_ab.jsonl).
  void* allocate(size_t bytes, size_t alignment) override {
    if (alignment > kAlign)
      throw InvalidArgument(
          fmt::format("host KV allocator aligns to {} bytes, {} requested", kAlign, alignment));
    if (bytes < kHostHugePageBytes)
      return ::operator new(bytes ? bytes : 1, std::align_val_t(kAlign));
    const size_t n = (bytes + kHostHugePageBytes - 1) / kHostHugePageBytes * kHostHugePageBytes;
    void* p = std::aligned_alloc(kHostHugePageBytes, n);
    if (!p) throw OutOfMemory(fmt::format("host KV allocator: cannot allocate {} bytes", bytes));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, n, MADV_HUGEPAGE);  // a request; refused (EINVAL) by kernels without THP
#endif
    return p;
  }
  void deallocate(void* p, size_t bytes) override {
    if (bytes < kHostHugePageBytes)
      ::operator delete(p, std::align_val_t(kAlign));
    else
      std::free(p);
  }
  void fill_zero(void* p, size_t bytes) override { std::memset(p, 0, bytes); }
  void copy_from_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  static constexpr size_t kAlign = 256;
};

constexpr size_t kTensorAlign = 256;

}  // namespace

KvAllocator& host_kv_allocator() {
  static HostKvAllocator a;
  return a;
}

KvCacheStorage::KvCacheStorage(const KvPlan& plan, int64_t num_blocks, KvAllocator& allocator)
    : plan_(plan), num_blocks_(num_blocks), alloc_(allocator) {
  if (plan_.groups.empty() || plan_.num_tensors <= 0 || plan_.page_bytes <= 0)
    throw InvalidArgument("KvCacheStorage: the plan has no KV group (no layer keeps a cache)");
  if (num_blocks < 2)
    throw InvalidArgument(fmt::format(
        "KvCacheStorage: need at least 2 blocks (block 0 is the null block), got {}", num_blocks));

  // Places and scale offsets.
  size_t scale_values = 0;
  std::map<int, size_t> scale_offset;
  for (const KvGroupPlan& g : plan_.groups)
    for (size_t j = 0; j < g.layers.size(); ++j) {
      LayerPlace p;
      p.group = g.group_id;
      p.tensor = int(j);
      const KvLayerSpec& s = plan_.layer(g.layers[j]);
      p.scale_count_each = s.kind == KvSpecKind::kMlaLatent ? s.scale_count() : s.scale_count() / 2;
      scale_offset[g.layers[j]] = scale_values;
      scale_values += size_t(s.scale_count());
      places_[g.layers[j]] = p;
    }

  const size_t bytes = tensor_bytes();
  try {
    for (int j = 0; j < plan_.num_tensors; ++j) {
      tensors_.push_back(nullptr);
      tensors_.back() = alloc_.allocate(bytes, kTensorAlign);
      alloc_.fill_zero(tensors_.back(), bytes);
    }
    if (scale_values) {
      scale_buffer_bytes_ = scale_values * sizeof(float);
      scale_buffer_ = static_cast<float*>(alloc_.allocate(scale_buffer_bytes_, kTensorAlign));
      const std::vector<float> ones(scale_values, 1.0f);
      alloc_.copy_from_host(scale_buffer_, ones.data(), scale_buffer_bytes_);
    }
  } catch (...) {
    for (void* t : tensors_)
      if (t) alloc_.deallocate(t, bytes);
    if (scale_buffer_) alloc_.deallocate(scale_buffer_, scale_buffer_bytes_);
    throw;
  }
  for (auto& [layer, p] : places_)
    if (p.scale_count_each) p.scales = scale_buffer_ + scale_offset[layer];
}

KvCacheStorage::~KvCacheStorage() {
  for (void* t : tensors_) alloc_.deallocate(t, tensor_bytes());
  if (scale_buffer_) alloc_.deallocate(scale_buffer_, scale_buffer_bytes_);
}

int KvCacheStorage::root(int layer_index) const {
  const KvLayerSpec& s = plan_.layer(layer_index);
  return s.kind == KvSpecKind::kShared ? *s.shares_with : layer_index;
}

const KvCacheStorage::LayerPlace& KvCacheStorage::place(int layer_index) const {
  auto it = places_.find(root(layer_index));
  if (it == places_.end())
    throw InvalidArgument(fmt::format("layer {} keeps no KV cache", layer_index));
  return it->second;
}

KvCacheView KvCacheStorage::view(int layer_index) const {
  const LayerPlace& p = place(layer_index);
  const KvGroupPlan& g = plan_.groups[size_t(p.group)];
  const KvLayerSpec& s = plan_.layer(root(layer_index));
  if (!s.is_attention())
    throw InvalidArgument(fmt::format("layer {} is a state layer: use state_page()", layer_index));
  const int kb = g.kernel_block_size;
  const int64_t H = s.num_kv_heads;
  const int64_t kd = kv_bytes_per_head_vector(s.dtype, s.model_dtype, s.head_size);
  const bool mla = s.kind == KvSpecKind::kMlaLatent;
  const int64_t vd = mla ? 0 : kv_bytes_per_head_vector(s.dtype, s.model_dtype, s.head_size_v);
  const int64_t ks = kv_block_scale_bytes_per_head_vector(s.dtype, s.head_size);
  const int64_t vs = mla ? 0 : kv_block_scale_bytes_per_head_vector(s.dtype, s.head_size_v);
  auto* base = static_cast<uint8_t*>(tensors_[size_t(p.tensor)]);

  KvCacheView v;
  v.dtype = s.dtype;
  v.num_blocks = int(num_blocks_ * g.ratio());
  v.block_size = kb;
  v.num_kv_heads = int(H);
  v.head_size = s.head_size;
  v.head_size_v = s.head_size_v;
  v.k = base;
  v.stride_block = g.kernel_page_stride;
  v.stride_head = kb * kd;
  v.stride_token = kd;
  if (!mla) {
    v.v = base + H * kb * kd;
    v.v_stride_block = g.kernel_page_stride;
    v.v_stride_head = kb * vd;
    v.v_stride_token = vd;
  }
  v.scale_granularity = s.scale_granularity;
  if (p.scale_count_each) {
    v.k_scale = p.scales;
    v.v_scale = mla ? nullptr : p.scales + p.scale_count_each;
  }
  if (ks) {
    v.k_block_scales = base + H * kb * (kd + vd);
    v.sb_block = g.kernel_page_stride;
    v.sb_head = kb * ks;
    v.sb_token = ks;
    if (!mla) {
      v.v_block_scales = v.k_block_scales + H * kb * ks;
      v.v_sb_block = g.kernel_page_stride;
      v.v_sb_head = kb * vs;
      v.v_sb_token = vs;
    }
  }
  return v;
}

KvCacheView contiguous_kv_view(KvCacheDType dtype, DType model_dtype, int total_k, int num_kv_heads,
                               int head_size, int head_size_v, int block_size) {
  dtype = resolve_kv_dtype(dtype, model_dtype);
  if (total_k < 0 || num_kv_heads <= 0 || head_size <= 0 || head_size_v < 0 || block_size <= 0)
    throw InvalidArgument(fmt::format(
        "contiguous K/V view needs total_k >= 0, num_kv_heads > 0, head_size > 0, head_size_v "
        ">= 0 and block_size > 0; got {}, {}, {}, {}, {}",
        total_k, num_kv_heads, head_size, head_size_v, block_size));
  const int64_t kd = kv_bytes_per_head_vector(dtype, model_dtype, head_size);
  const int64_t vd = kv_bytes_per_head_vector(dtype, model_dtype, head_size_v);
  const int64_t ks = kv_block_scale_bytes_per_head_vector(dtype, head_size);
  const int64_t vs = kv_block_scale_bytes_per_head_vector(dtype, head_size_v);
  KvCacheView v;
  v.dtype = dtype;
  v.num_blocks = std::max(total_k, 1);
  v.block_size = block_size;
  v.num_kv_heads = num_kv_heads;
  v.head_size = head_size;
  v.head_size_v = head_size_v;
  v.stride_head = kd;
  v.stride_token = v.stride_block = kd * num_kv_heads;
  v.v_stride_head = vd;
  v.v_stride_token = v.v_stride_block = vd * num_kv_heads;
  if (ks) {
    v.sb_head = ks;
    v.sb_token = v.sb_block = ks * num_kv_heads;
    v.v_sb_head = vs;
    v.v_sb_token = v.v_sb_block = vs * num_kv_heads;
  }
  return v;
}

void* KvCacheStorage::state_page(int layer_index, int32_t block) const {
  const LayerPlace& p = place(layer_index);
  if (plan_.groups[size_t(p.group)].kind != KvSpecKind::kState)
    throw InvalidArgument(fmt::format("layer {} is not a state layer", layer_index));
  if (block <= 0 || block >= num_blocks_)
    throw InvalidArgument(
        fmt::format("state block must be in [1, {}), got {}", num_blocks_, block));
  return static_cast<uint8_t*>(tensors_[size_t(p.tensor)]) + int64_t(block) * plan_.page_bytes;
}

void KvCacheStorage::set_scales(int layer_index, std::span<const float> k,
                                std::span<const float> v) {
  const KvLayerSpec& s = plan_.layer(layer_index);
  if (s.kind == KvSpecKind::kShared)
    throw InvalidArgument(
        fmt::format("layer {} reads layer {}'s cache and its scales: set the scales of layer {}",
                    layer_index, *s.shares_with, *s.shares_with));
  const LayerPlace& p = place(layer_index);
  if (!p.scale_count_each)
    throw InvalidArgument(fmt::format("layer {} has an unquantized KV cache ({}): no scales",
                                      layer_index, to_string(s.dtype)));
  const bool mla = s.kind == KvSpecKind::kMlaLatent;
  const size_t want = size_t(p.scale_count_each);
  if (k.size() != want || v.size() != (mla ? 0 : want))
    throw InvalidArgument(fmt::format(
        "layer {}: {} scales need {} k value(s) and {} v value(s), got {} and {}", layer_index,
        to_string(s.scale_granularity), want, mla ? 0 : want, k.size(), v.size()));
  for (float x : k)
    if (!(x > 0.f) || !std::isfinite(x))
      throw InvalidArgument(
          fmt::format("layer {}: scales must be finite and > 0, got {}", layer_index, x));
  for (float x : v)
    if (!(x > 0.f) || !std::isfinite(x))
      throw InvalidArgument(
          fmt::format("layer {}: scales must be finite and > 0, got {}", layer_index, x));
  alloc_.copy_from_host(p.scales, k.data(), want * sizeof(float));
  if (!mla) alloc_.copy_from_host(p.scales + want, v.data(), want * sizeof(float));
}

std::vector<float> KvCacheStorage::k_scales(int layer_index) const {
  const LayerPlace& p = place(layer_index);
  std::vector<float> out(size_t(p.scale_count_each));
  if (!out.empty()) alloc_.copy_to_host(out.data(), p.scales, out.size() * sizeof(float));
  return out;
}

std::vector<float> KvCacheStorage::v_scales(int layer_index) const {
  const LayerPlace& p = place(layer_index);
  if (plan_.layer(root(layer_index)).kind == KvSpecKind::kMlaLatent) return {};
  std::vector<float> out(size_t(p.scale_count_each));
  if (!out.empty())
    alloc_.copy_to_host(out.data(), p.scales + p.scale_count_each, out.size() * sizeof(float));
  return out;
}

void check_block_ids(std::span<const int32_t> block_ids, int64_t num_blocks) {
  for (int32_t b : block_ids)
    if (b < 0 || b >= num_blocks)
      throw InvalidArgument(
          fmt::format("zero_blocks: block must be in [0, {}), got {}", num_blocks, b));
}

void HostBlockZeroer::zero_blocks(std::span<const int32_t> block_ids) {
  const int64_t page = storage_.plan().page_bytes;
  check_block_ids(block_ids, storage_.num_blocks());
  for (int j = 0; j < storage_.num_tensors(); ++j) {
    auto* base = static_cast<uint8_t*>(storage_.tensor(j));
    for (int32_t b : block_ids) std::memset(base + int64_t(b) * page, 0, size_t(page));
  }
}

}  // namespace attnkit
