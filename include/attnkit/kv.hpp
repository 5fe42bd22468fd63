// The paged KV cache: per-layer KV specs, grouping of layers into KV groups, kernel block-size
// negotiation across every backend of a group, hybrid (attention + state) page alignment, the
// block pool, the per-request cache manager, host storage with KvCacheView per layer, and the CPU
// KV write.
//
// Memory layout (vLLM's hybrid layout, used for every model): the plan has `num_tensors` tensors
// of `num_blocks * page_bytes` bytes. Every group holds at most `num_tensors` layers; the j-th
// layer of each group lives in tensor j. A block id names page `id` of every tensor; it belongs to
// one group at a time. A manager block of `ratio` kernel blocks is stored as `ratio` consecutive
// canonical HND kernel blocks, so the kernel view is [num_blocks * ratio, H, kernel_block, D]
// and a kernel block table entry is `manager_block * ratio + j`.
// Inside one kernel block of a layer: K [H, kb, D], then V [H, kb, Dv], then (nvfp4) the e4m3
// block scales of K [H, kb, D/16] and of V [H, kb, Dv/16] (storage needs D == Dv for nvfp4).
// A state layer's page (one per request) starts at page `id` of its tensor (state_page()).
// Scales (fp32) are per layer, not per page: a separate buffer per owning layer with one k and one
// v scale (per tensor) or num_kv_heads of each (per head); MLA keeps only k.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "attnkit/attention.hpp"
#include "attnkit/capability.hpp"
#include "attnkit/types.hpp"

namespace attnkit {

// ---------------------------------------------------------------------------------------------
// Specs

enum class KvSpecKind {
  kFullAttention,   // grows with the sequence
  kSlidingWindow,   // keeps only the blocks that the window still sees
  kChunkedLocal,    // keeps only the blocks of the current attention chunk (Llama 4)
  kMlaLatent,       // one latent row (kv_lora_rank + rope) per token, one "head", no V
  kState,           // mamba / linear attention: a fixed page per request
  kCrossAttention,  // encoder-length cache, allocated once per request, no growth
  kShared,          // reads an earlier layer's cache: no memory of its own
  kNoCache          // encoder / encoder-only self-attention over contiguous K/V
};
std::string_view to_string(KvSpecKind k);

struct KvLayerSpec {
  int layer_index = 0;
  KvSpecKind kind = KvSpecKind::kFullAttention;
  AttentionType attn_type = AttentionType::kDecoder;
  int num_kv_heads = 0;  // MLA: 1; state: 0
  int head_size = 0;     // K (MLA: kv_lora_rank + rope)
  int head_size_v = 0;   // V; MLA: kv_lora_rank, read from each K row (no V storage)
  DType model_dtype = DType::kBFloat16;
  KvCacheDType dtype = KvCacheDType::kBFloat16;  // resolved storage (kAuto only for fp32 models)
  ScaleGranularity scale_granularity = ScaleGranularity::kNone;
  std::optional<int> sliding_window;
  std::optional<int> attention_chunk_size;  // kChunkedLocal
  int64_t state_bytes = 0;                  // kState: bytes per request
  std::optional<int> shares_with;           // kShared: the (root) layer whose cache it reads
  std::optional<int> pinned_block_size;

  bool has_memory() const { return kind != KvSpecKind::kShared && kind != KvSpecKind::kNoCache; }
  bool is_attention() const { return has_memory() && kind != KvSpecKind::kState; }
  // Storage bytes of one token of this layer: K + V (+ nvfp4 block scales), all KV heads.
  // 0 for state, shared and no-cache layers.
  int64_t bytes_per_token() const;
  // Bytes of one K (or V) head vector for one token, incl. nvfp4 block scales.
  int64_t k_token_head_bytes() const;
  int64_t v_token_head_bytes() const;
  // Page of one block of `block_size` tokens (state: state_bytes; shared/no-cache: 0).
  int64_t page_bytes(int block_size) const;
  // fp32 scale values this layer owns (k and v, per tensor or per head; MLA: k only).
  int scale_count() const;
  int64_t scale_bytes() const { return int64_t(scale_count()) * 4; }
  // Kind + shape + dtype: layers with equal keys can share a group.
  std::string group_key() const;
  // Sliding window and chunked local layers: the most key positions a query sees up to and
  // including its own (the window w, the chunk size C), which bounds the blocks they keep.
  std::optional<int> local_span() const {
    return kind == KvSpecKind::kSlidingWindow  ? sliding_window
           : kind == KvSpecKind::kChunkedLocal ? attention_chunk_size
                                               : std::nullopt;
  }
  // The first key position that a query at `position` (and every later one) can still see:
  // blocks wholly below it can be released. 0 for kinds that keep every block.
  int64_t first_visible_key(int64_t position) const;
};

// Throws InvalidArgument for a malformed layer (non-positive heads, nvfp4 with per-head scales).
KvLayerSpec kv_layer_spec(const LayerSpec& layer);
KvLayerSpec kv_layer_spec(const StateLayerSpec& layer);

// ---------------------------------------------------------------------------------------------
// Kernel block-size negotiation

struct BlockSizeChoice {
  int manager_block_size = 0;  // the allocation unit of the block pool
  int kernel_block_size = 0;   // what every backend of the group is given
  int ratio() const { return kernel_block_size ? manager_block_size / kernel_block_size : 0; }
  std::string reason;          // human readable: where the size came from
  bool overrode_user = false;  // a pinned size was changed
};

// Largest kernel block size that divides `manager_block` (and `kernel_divides` when > 0) and that
// every backend accepts exactly (an exact entry, or a multiple of a MultipleOf base); nullopt when
// none.
std::optional<int> largest_common_kernel_block(const std::vector<const Capabilities*>& backends,
                                               int manager_block, int kernel_divides = 0);

// Negotiates one group's sizes. `backends`: the Capabilities of every backend that runs a layer
// of the group (duplicates allowed; empty = no kernel constraint). With `pinned`, the manager
// block is the pinned size (split into kernel blocks when needed); otherwise the backends'
// preferred sizes, the default, then their declared sizes are tried in that order. Throws
// Unsupported naming every backend and the sizes it accepts when no size is common.
// `kernel_divides` > 0: the kernel block must also divide it (a chunked local group whose
// backends read each attention chunk as whole blocks, Capabilities::chunk_in_whole_blocks).
BlockSizeChoice negotiate_block_size(const std::vector<const Capabilities*>& backends,
                                     std::optional<int> pinned, int default_block_size = 16,
                                     int kernel_divides = 0);

// Kernel block table from a manager block table: entry m becomes m * ratio + j, j = 0..ratio-1.
std::vector<int32_t> expand_block_table(std::span<const int32_t> manager_table, int ratio);

// ---------------------------------------------------------------------------------------------
// Plan

struct KvPlanOptions {
  std::optional<int> block_size;  // pinned by the user; else each LayerSpec::block_size applies
  int default_block_size = 16;
  std::optional<uint64_t> memory_bytes;  // KV budget: blocks and tokens that fit
  int64_t max_model_len = 0;             // 0: the model's max_position_embeddings
  // Cross-attention cache length (0: the model's max_encoder_positions, else max_model_len).
  int max_encoder_len = 0;
  // Prefill tokens a step may write (chunked prefill): a sliding window holds its window plus
  // one such chunk (vLLM: max_num_batched_tokens; attnkit run: --max-tokens-per-step).
  int max_tokens_per_step = 512;
};

struct KvGroupPlan {
  int group_id = 0;
  KvSpecKind kind = KvSpecKind::kFullAttention;
  KvLayerSpec spec;                   // of the first layer (all layers share its group_key)
  std::vector<int> layers;            // layers with memory, in tensor order
  std::vector<int> shared_layers;     // layers that read a layer of this group
  std::vector<std::string> backends;  // distinct backend names negotiated over
  int manager_block_size = 0;
  int kernel_block_size = 0;
  int ratio() const { return kernel_block_size ? manager_block_size / kernel_block_size : 1; }
  std::string block_size_reason;
  int64_t bytes_per_token = 0;     // all layers of the group (0 for state)
  int64_t real_page_bytes = 0;     // one layer, one manager block, before padding
  int64_t page_bytes = 0;          // after page unification (padding)
  int64_t kernel_page_stride = 0;  // page_bytes / ratio: stride between kernel blocks
  // Blocks one request of `tokens` tokens holds in this group (state: 1; cross: encoder length).
  int64_t blocks_for_tokens(int64_t tokens, int64_t encoder_len) const;
  // Blocks a request admitted with `tokens` tokens takes: blocks_for_tokens, except that a
  // sliding window (or chunked local group) holds all of them until decode moves past some.
  int64_t blocks_at_admission(int64_t tokens, int64_t encoder_len) const;
  // The most blocks a request of `tokens` tokens holds at once when they arrive at most `chunk`
  // at a time (KvCacheManager::append_tokens): a sliding window then holds only the blocks of
  // its window and of the chunk being written, since each append first releases the blocks
  // below the window of the chunk's first query.
  int64_t peak_blocks(int64_t tokens, int64_t chunk, int64_t encoder_len) const;
};

struct KvPlan {
  std::string model;
  std::vector<KvLayerSpec> layers;  // every attention and state layer, by layer index
  std::vector<KvGroupPlan> groups;
  int num_tensors = 0;          // layers per group (the most any group holds)
  int64_t page_bytes = 0;       // unified page of one layer and one block
  int64_t bytes_per_block = 0;  // page_bytes * num_tensors
  int64_t bytes_per_token = 0;  // every attention layer with memory
  int64_t scale_bytes = 0;      // fp32 scales of every layer (per layer, not per page)
  int num_scale_values = 0;
  int64_t max_model_len = 0;
  int max_encoder_len = 0;
  int max_tokens_per_step = 0;
  bool needs_zeroing = false;
  std::string zeroing_reason;
  std::vector<std::string> notes;  // overrides and raises, also logged
  std::optional<uint64_t> memory_bytes;
  int64_t num_blocks = 0;  // for memory_bytes (0 without a budget)
  int64_t max_tokens = 0;  // tokens of one sequence that fit in num_blocks

  const KvGroupPlan& group_of_layer(int layer_index) const;  // throws InvalidArgument
  const KvLayerSpec& layer(int layer_index) const;           // throws InvalidArgument
  // Blocks that fit `memory_bytes` (after scales), and tokens of one sequence for that count.
  int64_t blocks_for_memory(uint64_t memory_bytes) const;
  int64_t tokens_for_blocks(int64_t num_blocks) const;
  // The fewest blocks for which tokens_for_blocks is positive: the null block, one request's
  // window / state / encoder blocks at max_model_len, and a block of each growing group.
  int64_t min_blocks_for_max_len() const;
  // Blocks one sequence of `tokens` tokens (and `encoder_len` encoder tokens) holds, all groups.
  int64_t blocks_needed(int64_t tokens, int64_t encoder_len = 0) const;
  // The same for tokens that arrive at most `chunk` at a time (KvGroupPlan::peak_blocks).
  int64_t peak_blocks(int64_t tokens, int64_t chunk, int64_t encoder_len = 0) const;
};

// `backends_per_layer[i]`: the Capabilities of the backend(s) selected for
// model.attention_layers[i] (same order, same size; empty inner vector = unconstrained).
// Validates KV sharing targets (InvalidArgument), negotiates block sizes (Unsupported), aligns
// hybrid pages and logs every override of a pinned block size.
KvPlan plan_kv_cache(const ModelSpec& model,
                     const std::vector<std::vector<const Capabilities*>>& backends_per_layer,
                     const KvPlanOptions& options = {});

// What `attnkit plan` prints (one line each, no trailing newline), and the same as JSON.
std::vector<std::string> describe_kv_plan(const KvPlan& plan);
std::string kv_plan_to_json(const KvPlan& plan);

// ---------------------------------------------------------------------------------------------
// Block pool

// Fills freshly allocated blocks with zeros in every layer tensor. Host: memset; the CUDA backend
// implements it with one kernel over every tensor.
class BlockZeroer {
 public:
  virtual ~BlockZeroer() = default;
  virtual void zero_blocks(std::span<const int32_t> block_ids) = 0;
};
// The zeroers' input rule: InvalidArgument unless every id is in [0, num_blocks).
void check_block_ids(std::span<const int32_t> block_ids, int64_t num_blocks);

// Fixed set of blocks with O(1) allocate and free. Block 0 is the null block (never handed out;
// released sliding-window entries point at it). Free blocks sit in one LRU queue; a freed block
// that carries a prefix hash stays findable until it is evicted by an allocation.
class BlockPool {
 public:
  explicit BlockPool(int64_t num_blocks, bool zero_fresh_blocks = false);
  static constexpr int32_t kNullBlock = 0;

  int64_t num_blocks() const { return int64_t(ref_.size()); }
  int64_t num_usable() const { return num_blocks() - 1; }
  int64_t num_free() const { return free_count_; }  // incl. cached blocks with no reference
  int64_t num_used() const { return num_usable() - free_count_; }
  int64_t num_cached() const { return int64_t(hash_to_block_.size()); }

  // n fresh blocks (ref 1), evicting least recently freed cached blocks first. Throws OutOfMemory
  // and changes nothing when fewer than n are free.
  std::vector<int32_t> allocate(int64_t n);
  // Drops one reference of each; a block reaching 0 goes to the tail of the free queue (kept in
  // the prefix cache when hashed). Throws InvalidArgument (changing nothing) for a bad id.
  void free(std::span<const int32_t> blocks);
  // Adds a reference to a used block (a second owner).
  void share(int32_t block);
  int ref_count(int32_t block) const;

  // Prefix cache: hash of a full block = hash(parent hash, its token ids).
  static uint64_t hash_block(uint64_t parent_hash, std::span<const int32_t> tokens);
  // A used block's hash; the pool can then return it from lookup() after it is freed.
  void cache_block(int32_t block, uint64_t hash);
  // The block cached for `hash`, with one more reference (taken out of the free queue), or
  // nullopt.
  std::optional<int32_t> lookup(uint64_t hash);
  std::optional<uint64_t> block_hash(int32_t block) const;
  // The block cached for `hash` without taking it (nullopt when absent).
  std::optional<int32_t> find_cached(uint64_t hash) const;

  bool zero_fresh_blocks() const { return zero_fresh_; }
  // Blocks allocated since the last drain that must be zeroed before the next forward pass.
  std::vector<int32_t> take_blocks_to_zero();
  // Zeroes the pending blocks with `zeroer` (no-op when zeroing is off).
  void zero_pending(BlockZeroer& zeroer);

  // Checks every invariant (each block either free or referenced, queue and counts consistent);
  // throws Error with the broken rule. For tests.
  void check_invariants() const;

 private:
  void unlink(int32_t b);
  void push_back(int32_t b);
  void check_id(int32_t b) const;

  bool zero_fresh_;
  std::vector<int> ref_;
  std::vector<int32_t> prev_, next_;  // intrusive free queue; -1 ends
  std::vector<uint8_t> in_queue_;
  int32_t head_ = -1, tail_ = -1;
  int64_t free_count_ = 0;
  std::vector<std::optional<uint64_t>> hash_;
  std::unordered_map<uint64_t, int32_t> hash_to_block_;
  std::vector<int32_t> to_zero_;
};

// ---------------------------------------------------------------------------------------------
// Per-request cache manager

using RequestId = int64_t;

struct KvManagerOptions {
  bool enable_prefix_caching = true;  // used when every group is full / MLA attention
};

class KvCacheManager {
 public:
  // Owns a pool of `num_blocks` blocks (incl. the null block); zeroing follows the plan.
  KvCacheManager(const KvPlan& plan, int64_t num_blocks, KvManagerOptions options = {});

  // Registers a request and allocates blocks for its prompt in every group (cross groups:
  // `encoder_len` tokens; state groups: one block). Full blocks found in the prefix cache are
  // reused. Returns the number of prompt tokens already in the cache. Throws InvalidArgument
  // (duplicate id, more than max_model_len tokens) or OutOfMemory; on a throw nothing changes.
  int64_t add_request(RequestId id, std::span<const int32_t> prompt, int64_t encoder_len = 0);
  // Appends generated tokens, allocating on demand; sliding groups first release blocks that
  // fell out of the window. Same errors and guarantee as add_request.
  void append_tokens(RequestId id, std::span<const int32_t> tokens);
  // Records that the K/V of the first `num_tokens` tokens are written: only then do its full
  // blocks enter the prefix cache (a block hashed before its pages are written would hand a
  // later request unwritten K/V). Throws InvalidArgument beyond the request's length.
  void mark_computed(RequestId id, int64_t num_tokens);
  // Frees every block of the request (cached full blocks stay findable until evicted).
  void free_request(RequestId id);

  bool has_request(RequestId id) const;
  int64_t num_tokens(RequestId id) const;
  int64_t num_cached_tokens(RequestId id) const;  // prompt tokens served from the prefix cache
  // Manager block ids of the request in `group` (released sliding blocks are kNullBlock).
  const std::vector<int32_t>& blocks(RequestId id, int group) const;
  // Kernel-granularity block table (int32, entries m * ratio + j).
  std::vector<int32_t> block_table(RequestId id, int group) const;
  // Rows of kernel block tables for a batch: out[i * stride + j], padded with kNullBlock.
  // Throws InvalidArgument when a row does not fit `stride`.
  void fill_block_tables(std::span<const RequestId> ids, int group, int32_t* out, int stride) const;
  // Kernel slots (kernel block * kernel block size + offset) of positions [start, start+count);
  // -1 (skip) for prefix-cached positions and released blocks. Throws InvalidArgument for
  // positions beyond num_tokens.
  std::vector<int64_t> slot_mapping(RequestId id, int group, int64_t start, int64_t count) const;

  // Blocks a new request of `tokens` tokens needs now (all groups): KvPlan::blocks_needed.
  int64_t blocks_needed(int64_t tokens, int64_t encoder_len = 0) const {
    return plan_.blocks_needed(tokens, encoder_len);
  }

  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  const KvPlan& plan() const { return plan_; }

 private:
  struct Request {
    std::vector<int32_t> tokens;
    std::vector<std::vector<int32_t>> blocks;  // per group
    int64_t encoder_len = 0;
    int64_t cached_tokens = 0;
    int64_t computed_tokens = 0;      // tokens whose K/V are written (mark_computed)
    std::vector<int64_t> num_hashed;  // per group: full blocks registered in the prefix cache
    std::vector<uint64_t> last_hash;  // per group: hash of the last registered block
  };
  // Blocks to add per group (and sliding blocks to release) to hold `new_total` tokens.
  struct Growth {
    std::vector<int64_t> add;
    std::vector<std::vector<size_t>> release;  // indices into the group's block list
    int64_t new_blocks = 0;
    int64_t freed_blocks = 0;
  };
  Growth growth(const Request& r, int64_t new_total) const;
  void apply(Request& r, const Growth& g);
  void register_full_blocks(Request& r);
  bool prefix_caching_on() const;
  static uint64_t group_seed(size_t group);
  const Request& get(RequestId id) const;

  KvPlan plan_;
  KvManagerOptions options_;
  BlockPool pool_;
  std::map<RequestId, Request> requests_;
};

// ---------------------------------------------------------------------------------------------
// Storage

// Where KV tensors and scales live. Host now; a CUDA allocator plugs in the same way.
class KvAllocator {
 public:
  virtual ~KvAllocator() = default;
  virtual void* allocate(size_t bytes, size_t alignment) = 0;
  virtual void deallocate(void* p, size_t bytes) = 0;
  virtual void fill_zero(void* p, size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
};
// Process-wide host allocator (aligned new/delete, memset, memcpy). Allocations of
// kHostHugePageBytes and more start on that boundary with transparent huge pages requested
// (Linux). deallocate takes the size given to allocate.
inline constexpr size_t kHostHugePageBytes = size_t(2) << 20;
KvAllocator& host_kv_allocator();

class KvCacheStorage {
 public:
  // Allocates plan.num_tensors tensors of num_blocks * plan.page_bytes bytes (zero-filled) and
  // the per-layer scales (1.0). `allocator` must outlive the storage.
  KvCacheStorage(const KvPlan& plan, int64_t num_blocks,
                 KvAllocator& allocator = host_kv_allocator());
  ~KvCacheStorage();
  KvCacheStorage(const KvCacheStorage&) = delete;
  KvCacheStorage& operator=(const KvCacheStorage&) = delete;

  int64_t num_blocks() const { return num_blocks_; }
  int num_tensors() const { return int(tensors_.size()); }
  void* tensor(int j) const { return tensors_.at(size_t(j)); }
  size_t tensor_bytes() const { return size_t(num_blocks_) * size_t(plan_.page_bytes); }
  const KvPlan& plan() const { return plan_; }

  // Kernel view of an attention layer (shared layers: the target's memory and scales), at
  // kernel-block granularity: num_blocks = storage blocks * ratio. Throws InvalidArgument for a
  // state / no-cache / unknown layer.
  KvCacheView view(int layer_index) const;
  // Start of a state layer's page for `block` (state_bytes usable of page_bytes).
  void* state_page(int layer_index, int32_t block) const;

  // Scales of a quantized layer: 1 value (per tensor) or num_kv_heads values (per head) each;
  // MLA takes k only (v must be empty). Throws InvalidArgument for a wrong count, a non-positive
  // or non-finite value, or an unquantized / shared layer (set the target's).
  void set_scales(int layer_index, std::span<const float> k_scale, std::span<const float> v_scale);
  std::vector<float> k_scales(int layer_index) const;  // host copy
  std::vector<float> v_scales(int layer_index) const;

 private:
  struct LayerPlace {
    int group = 0;
    int tensor = 0;
    float* scales = nullptr;  // k values then v values
    int scale_count_each = 0;
  };
  const LayerPlace& place(int layer_index) const;
  int root(int layer_index) const;

  KvPlan plan_;
  int64_t num_blocks_ = 0;
  KvAllocator& alloc_;
  std::vector<void*> tensors_;
  float* scale_buffer_ = nullptr;
  size_t scale_buffer_bytes_ = 0;
  std::map<int, LayerPlace> places_;
};

// Host zeroer: memsets the page of each block in every tensor of the storage.
class HostBlockZeroer : public BlockZeroer {
 public:
  explicit HostBlockZeroer(KvCacheStorage& storage) : storage_(storage) {}
  void zero_blocks(std::span<const int32_t> block_ids) override;

 private:
  KvCacheStorage& storage_;
};

// ---------------------------------------------------------------------------------------------
// The cu_seqlens_k form (encoder self-attention, docs/semantics.md §2)

// Contiguous K/V rows [total_k, num_kv_heads, head_size] (V: head_size_v) of the storage `dtype`,
// sequence s at rows [cu_seqlens_k[s], cu_seqlens_k[s + 1]), described as a paged cache whose
// blocks may start at any row: stride_block = stride_token, num_blocks = max(total_k, 1). A batch
// reads it with block_size >= its longest sequence, block table = cu_seqlens_k (stride 1) and
// seqused_k = the differences; block_size 1 is the same memory as a cache the rows are written
// into (slot t = row t). nvfp4 block scales follow the same rows ([total_k, num_kv_heads, groups]).
// Strides only: the caller sets k, v, the scales and the block-scale pointers.
KvCacheView contiguous_kv_view(KvCacheDType dtype, DType model_dtype, int total_k, int num_kv_heads,
                               int head_size, int head_size_v, int block_size);

// ---------------------------------------------------------------------------------------------
// CPU KV write / read

// Writes K/V rows through the slot mapping (slots index kernel blocks of args.cache), converting
// to the cache dtype: fp8 saturating to value / scale; nvfp4 per 16 elements a block scale
// amax / 6 / tensor_scale stored as e4m3 and e2m1 values of value / (block_scale * tensor_scale).
// A cache dtype of kAuto means fp32 storage. Validates everything before writing anything:
// InvalidArgument for a slot < -1 or >= num_blocks * block_size, null pointers, bad shapes.
void write_kv_cpu(const KvWriteArgs& args);

// Dequantized K (value = false) or V (value = true) head vector of one slot; MLA V reads the
// first head_size_v elements of the K row. `out` holds head_size (K) or head_size_v (V) floats.
void read_kv_cpu(const KvCacheView& cache, int64_t slot, int head, bool value, float* out);

}  // namespace attnkit
