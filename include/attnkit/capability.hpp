// The capability model: what a backend declares it can run, as data, and the reasons a layer
// fails it. The same answer serves the selector, an explicit choice and backend construction.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/device.hpp"
#include "attnkit/types.hpp"

namespace attnkit {

// One entry of a kernel block-size list: an exact size, or any multiple of `value`.
struct BlockSizeEntry {
  int value = 1;
  bool multiple = false;
  static BlockSizeEntry exact(int v) { return {v, false}; }
  static BlockSizeEntry multiple_of(int v) { return {v, true}; }
  bool accepts_kernel_block(int b) const { return multiple ? b % value == 0 : b == value; }
  bool operator==(const BlockSizeEntry&) const = default;
};
std::string to_string(const BlockSizeEntry& e);               // "16" or "MultipleOf(16)"
std::string to_string(const std::vector<BlockSizeEntry>& v);  // "[16, 32, MultipleOf(64)]"

// A manager (pinned) block size is supported when some entry's base divides it: a manager
// block may be split into several kernel blocks.
bool block_size_supported(const std::vector<BlockSizeEntry>& entries, int block_size);

// Head sizes: an explicit list, or a range with a step; an empty rule accepts any size.
struct HeadSizeRule {
  std::vector<int> sizes;  // explicit sizes; when empty the range applies
  int min = 0;             // inclusive; 0 = unbounded
  int max = 0;             // inclusive; 0 = unbounded
  int multiple_of = 1;
  bool accepts(int head_size) const;
  std::string describe() const;  // "[64, 128, 256]", "32..256 step 8", "any"
};

// Metadata forms a kernel reads. Decoder and cross layers always pass seqused_k with a block
// table (the paged form decode uses); encoder-only layers pass cu_seqlens_k over contiguous K/V.
enum class MetadataForm : unsigned {
  kSeqUsedK = 1u << 0,
  kBlockTable = 1u << 1,
  kCuSeqlensK = 1u << 2,
};
std::vector<MetadataForm> required_metadata_forms(const LayerSpec& spec);
std::string_view to_string(MetadataForm f);

enum class MlaSupport { kStandardOnly, kMlaOnly, kBoth };

struct Capabilities {
  std::string name;
  std::vector<Platform> platforms;  // empty = any platform
  // Inclusive compute-capability range (as_int: 80, 90, 103, 121); checked on cuda/rocm only.
  std::optional<int> min_compute_capability;
  std::optional<int> max_compute_capability;
  std::vector<DType> dtypes = {DType::kFloat16, DType::kBFloat16};
  std::vector<KvCacheDType> kv_cache_dtypes = {KvCacheDType::kAuto, KvCacheDType::kFloat16,
                                               KvCacheDType::kBFloat16};  // empty = any
  HeadSizeRule head_sizes;  // applies to head_size (Q/K)
  // head_size_v != head_size is accepted only for these (qk, v) pairs; `any_head_size_v` lifts it.
  std::vector<std::pair<int, int>> asymmetric_head_sizes;
  bool any_head_size_v = false;
  std::vector<BlockSizeEntry> kernel_block_sizes = {BlockSizeEntry::multiple_of(1)};
  std::optional<int> preferred_block_size;  // nullopt: the default if supported, else smallest base
  MlaSupport mla = MlaSupport::kStandardOnly;
  bool sparse = false;  // a sparse-MLA backend takes only sparse layers, others only dense
  bool sinks = false;
  bool alibi = false;
  bool logits_soft_cap = false;
  bool sliding_window = false;
  bool non_causal = false;
  bool per_head_quant_scales = false;
  bool mm_prefix = false;
  bool chunked_local = false;  // attention_chunk_size (Llama 4's chunked local attention)
  // Chunked local layers need kernel blocks that divide attention_chunk_size (the backend reads a
  // chunk as whole blocks): the KV plan negotiates such a size for their groups.
  bool chunk_in_whole_blocks = false;
  std::vector<AttentionType> attn_types = {AttentionType::kDecoder};
  unsigned metadata_forms = unsigned(MetadataForm::kSeqUsedK) | unsigned(MetadataForm::kBlockTable);
  // Free-form cross-feature rule: extra reasons for combinations the flat fields cannot say.
  std::function<std::vector<std::string>(const LayerSpec&, const DeviceInfo&)> combination;

  bool supports_metadata(MetadataForm f) const { return (metadata_forms & unsigned(f)) != 0; }
  int preferred_block(int default_block_size) const;
};

// Every failing reason as a stable string, in a fixed order; empty means valid. Reason strings:
//   "head_size not supported", "head_size_v not supported", "dtype not supported",
//   "kv_cache_dtype not supported", "block_size not supported", "MLA not supported",
//   "non-MLA not supported", "attention sinks not supported", "sparse not supported",
//   "non-sparse not supported", "per-head quant scales not supported",
//   "platform <p> not supported", "compute capability not supported",
//   "attention type <t> not supported", "sliding window not supported",
//   "chunked local attention not supported", "non-causal attention not supported",
//   "ALiBi not supported", "logits softcap not supported",
//   "partial multimodal token full attention not supported",
//   "<form> metadata not supported", then the combination rule's reasons.
std::vector<std::string> invalid_reasons(const Capabilities& caps, const LayerSpec& spec,
                                         const DeviceInfo& device);
// The device part of those reasons (platform, compute capability): empty when the backend runs
// on the device at all.
std::vector<std::string> device_reasons(const Capabilities& caps, const DeviceInfo& device);

// "9.0" for 90; and the range a backend declares: "9.0", "10.0-10.3", "8.0+", "up to 8.9", "any".
std::string compute_capability_text(int cc);
std::string compute_capability_range(const Capabilities& c);

// The reasons with what the backend accepts appended where that helps the user act, e.g.
// "block_size not supported (kernel block sizes [16, 32, 64])". For messages; the bare reason
// strings stay the stable API.
std::vector<std::string> detailed_reasons(const Capabilities& caps,
                                          const std::vector<std::string>& reasons);

// A kernel generation of a backend (CUDA_FLASH v2/v3/v4): what it can run and whether this
// release builds it. A generation policy picks one for a layer with ordered downgrade rules.
struct KernelGeneration {
  std::string name;  // "v2", "v3", "v4"
  bool built = false;
  Capabilities caps;  // compute-capability range included (v3: exactly 90)
};

}  // namespace attnkit
