#include "backends/cuda_flash/cuda_flash_backend.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>

#include "attnkit/error.hpp"
#include "backends/cuda_flash/capabilities.hpp"
#include "core/strings.hpp"

#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
#include <cuda_runtime.h>

#include "backends/common/validate.hpp"
#include "backends/cuda_flash/family.hpp"
#include "backends/cuda_flash/manifest.hpp"
#include "backends/cuda_flash/tiles.hpp"
#endif

namespace attnkit {

int cuda_flash_generation(std::string_view variant) {
  if (iequals(variant, "v2")) return 2;
  if (iequals(variant, "v3")) return 3;
  return 0;
}

#if !defined(ATTNKIT_CUDA_FLASH_KERNELS)

std::unique_ptr<AttentionBackend> make_cuda_flash_backend(const CudaFlashOptions&) {
  throw Unsupported("CUDA_FLASH kernels are not in this build (configure with the cuda preset)");
}
int cuda_flash_planned_splits(const AttentionBackend&) { return 0; }
int cuda_flash_planned_split_chunk(const AttentionBackend&) { return 0; }
int cuda_flash_planned_form(const AttentionBackend&) { return -1; }
int cuda_flash_planned_parts(const AttentionBackend&) { return 0; }
int cuda_flash_decode_ctas_per_sm(const AttentionBackend&) { return 0; }
bool cuda_flash_decode_early_copies(const AttentionBackend&) { return false; }
std::unique_ptr<BlockZeroer> make_cuda_page_zeroer(std::vector<void*>, int64_t, int, void*) {
  throw Unsupported("CUDA_FLASH kernels are not in this build (configure with the cuda preset)");
}

#else

namespace {

using namespace cuda_flash;

void check_cuda(cudaError_t e, const char* what, std::string_view backend = "CUDA_FLASH") {
  if (e != cudaSuccess)
    throw Error(fmt::format("{}: {} failed: {}", backend, what, cudaGetErrorString(e)));
}

// Whether some query row of the (host) batch lies in a PrefixLM range that reaches past its
// mask's band (docs/semantics.md §4): a row at key position t sees [t - left, min(t + right,
// kv_len - 1)], widened to [s, e - 1] when t is in [s, e). Over a range's rows [x, y] the band's
// lower end is largest at y and its upper end smallest at x.
bool mm_prefix_widens(const AttentionBatch& b, const AttentionLayerParams& L) {
  if (!b.mm_prefix_offsets) return false;
  const int64_t left = L.window_left >= 0 ? L.window_left : kUnboundedWindow;
  int64_t right = L.window_right >= 0 ? L.window_right : kUnboundedWindow;
  if (L.causal) right = std::min<int64_t>(right, 0);
  for (int i = 0; i < b.num_seqs; ++i) {
    const int64_t kv_len = b.seqused_k[i];
    const int64_t first = kv_len - (b.cu_seqlens_q[i + 1] - b.cu_seqlens_q[i]);  // first row's t
    for (int r = b.mm_prefix_offsets[i]; r < b.mm_prefix_offsets[i + 1]; ++r) {
      const int64_t s = b.mm_prefix_ranges[2 * r], e = b.mm_prefix_ranges[2 * r + 1];
      const int64_t x = std::max(s, first), y = std::min(e, kv_len) - 1;
      if (x > y) continue;  // none of the sequence's rows lies in the range
      if (s < y - left || e - 1 > std::min(x + right, kv_len - 1)) return true;
    }
  }
  return false;
}

int storage_kind(KvCacheDType d) {
  switch (d) {
    case KvCacheDType::kFloat16:
      return 0;
    case KvCacheDType::kBFloat16:
      return 1;
    case KvCacheDType::kFp8E4M3:
      return 2;
    case KvCacheDType::kFp8E5M2:
      return 3;
    default:
      throw Unsupported(
          fmt::format("CUDA_FLASH: kv_cache_dtype {} is not supported; expected "
                      "float16, bfloat16, fp8_e4m3 or fp8_e5m2",
                      to_string(d)));
  }
}

CacheTensors cache_tensors(const KvCacheView& c) {
  return {{static_cast<char*>(c.k), static_cast<char*>(c.v)},
          {c.stride_block, c.v_stride_block},
          {c.stride_head, c.v_stride_head},
          {c.stride_token, c.v_stride_token}};
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

class CudaFlashBackend final : public AttentionBackend {
  // The decode form's launch over fp8 caches where the 16-bit plan runs a prefill form (heads
  // 129..256; speculative decodes of 17..32 packed rows at heads up to 128).
  struct Fp8Decode {
    bool on = false;
    int tile_keys = 64, splits = 1, grid_m = 1;
    int splits_paged = 1;  // over pages that hold whole tiles (fp8_decode_paged_count)
    RaggedSplits ragged;
  };
  // One part's launch (part_runs).
  struct Plan {
    bool mm_widens = false;  // PrefixLM ranges widen some row: a prefill form's kMm kernel runs
    int grid_m = 1, splits = 1;
    int splits_paged = 1, tile_keys = 64;  // kLoneCtaTilesPaged's count; the 16-bit tile
    bool split_keys = false;
    int form = 0;  // FlashGeometry::form
    // v3's Hopper prefill form (16-bit or fp8 cache): its grid rows and split count
    bool hopper = false;
    int grid_m_hopper = 1, splits_hopper = 1;
    RaggedSplits ragged;  // decode form: a split count per sequence (chunk_tiles > 0)
    Fp8Decode fp8;        // the decode form over an fp8 cache (fp8.on)
    int ws_splits = 1;    // the most splits any of its launches takes
  };
  // Sequences [seq0, seq0 + seqs), `toks` query tokens.
  struct Part {
    int seq0 = 0, seqs = 0, toks = 0;
    Plan plan;
  };
  struct BatchPlan {
    bool valid = false;
    bool mm = false;   // the batch gives PrefixLM ranges
    int mm_count = 0;  // how many (check_args bounds its device reads by it)
    int num_seqs = 0, total_q = 0, head_qk = 0, head_v = 0, num_heads = 0;
    int ws_splits = 1;              // the workspace's split extent
    bool per_token_counts = false;  // a ragged part: the combine reads each token's count
    size_t workspace = 0;
    // Chunked local attention: the parts are planned over the batch's chunk pieces (tiles.hpp
    // chunk_piece), which run() builds in the workspace from chunk_offset on: cu_seqlens_q
    // [pieces + 1], seqused_k [pieces], block-table rows [pieces, piece_entries]. A row holds a
    // whole chunk's blocks (at block size 1 at most, or the batch's table stride), not only
    // this step's keys: a captured graph replays over longer caches with the same layout.
    int chunk = 0, pieces = 0, piece_entries = 0;
    size_t chunk_offset = 0;
    bool chunk_kernel = false;  // a decode batch: the kChunk kernels take the chunk, no pieces
    std::vector<Part> parts;
    int main = 0;  // the part with the most query tokens (what planned_splits() etc. report)
  };

 public:
  CudaFlashBackend(const FlashFamily& fam, const CudaFlashOptions& options)
      : fam_(fam), options_(options) {
    int dev = 0;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      throw Unsupported(fmt::format("{}: no CUDA device is visible", fam_.name));
    }
    check_cuda(cudaGetDevice(&dev), "cudaGetDevice", fam_.name);
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties", fam_.name);
    if (prop.major < 8)
      throw Unsupported(fmt::format("{} needs compute capability >= 8.0; {} is {}.{}", fam_.name,
                                    prop.name, prop.major, prop.minor));
    sm_count_ = prop.multiProcessorCount;
    cc_major_ = prop.major;
    cc_ = prop.major * 10 + prop.minor;
    smem_per_sm_ = int(prop.sharedMemPerMultiprocessor);
    // CUDA_FLASH's generation (CUDA_MLA picks its forms through fam_.geometry).
    if (options_.generation != 0 && options_.generation != 2 && options_.generation != 3)
      throw InvalidArgument(
          fmt::format("{}: generation {} is not built; expected 0 (by device), "
                      "2 or 3",
                      fam_.name, options_.generation));
    if (options_.decode_occupancy < 0 || options_.decode_occupancy > 2)
      throw InvalidArgument(fmt::format(
          "{}: decode_occupancy {} is not a choice; expected 0 (by the launch's grid), 1 (the "
          "shared-memory floor) or 2 (the kernel's own)",
          fam_.name, options_.decode_occupancy));
    if (options_.early_copies < 0 || options_.early_copies > 2)
      throw InvalidArgument(fmt::format(
          "{}: early_copies {} is not a choice; expected 0 (by the launch's grid), 1 (always) or "
          "2 (never)",
          fam_.name, options_.early_copies));
    if (options_.generation == 3 && cc_ != 90)
      throw Unsupported(fmt::format("{} v3 (Hopper) needs compute capability 9.0; {} is {}.{}",
                                    fam_.name, prop.name, prop.major, prop.minor));
    hopper_ = !fam_.geometry && cc_ == 90 && options_.generation != 2;
    // SM90: the decode kernels as programmatic dependents (docs/semantics.md §7; off with
    // ATTNKIT_CUDA_PDL=0).
    const char* pdl_env = std::getenv("ATTNKIT_CUDA_PDL");
    pdl_ = cc_major_ >= 9 && !(pdl_env && std::string_view(pdl_env) == "0");
    // Serving runs' A/B of concurrent parts (ATTNKIT_CUDA_CONCURRENT_PARTS=0: in turn).
    const char* con_env = std::getenv("ATTNKIT_CUDA_CONCURRENT_PARTS");
    if (con_env && std::string_view(con_env) == "0") options_.concurrent_parts = false;
    const char* piece_env = std::getenv("ATTNKIT_CUDA_CHUNK_PIECES");
    if (piece_env && std::string_view(piece_env) == "1") options_.chunk_pieces = true;
    const char* check_env = std::getenv("ATTNKIT_CUDA_CHECK_ARGS");
    if (check_env && std::string_view(check_env) == "1") options_.check_args = true;
    if (options_.check_args)
      check_cuda(cudaMalloc(&check_report_, 4 * sizeof(int64_t)), "cudaMalloc", fam_.name);
    fam_.prepare(cc_);
    check_cuda(cudaGetLastError(), "setting kernel shared-memory limits", fam_.name);
  }
  CudaFlashBackend(const CudaFlashBackend&) = delete;
  CudaFlashBackend& operator=(const CudaFlashBackend&) = delete;
  ~CudaFlashBackend() override {
    if (check_report_) cudaFree(check_report_);
    if (side_) cudaStreamDestroy(side_);
    if (fork_) cudaEventDestroy(fork_);
    if (join_) cudaEventDestroy(join_);
  }

  // PrefixLM ranges (docs/semantics.md §4): a family that does not declare them (CUDA_MLA)
  // refuses any; CUDA_FLASH takes them at the heads whose prefill forms have kMm kernels
  // (manifest.hpp kMmPrefixHeads) and plans them in plan().
  void check_mm_prefix(const AttentionBatch& b, const AttentionLayerParams& layer) const {
    if (!b.mm_prefix_offsets && !b.mm_prefix_ranges) return;
    const int hv = layer.head_size_v ? layer.head_size_v : layer.head_size;
    if (!capabilities().mm_prefix)
      throw Unsupported(
          fmt::format("{} plan: the batch gives PrefixLM (mm_prefix) ranges, which "
                      "it does not declare",
                      fam_.name));
    if (!mm_prefix_built(layer.head_size, hv))
      throw Unsupported(fmt::format(
          "{} plan: PrefixLM (mm_prefix) ranges at head_size {}/{} are not built (heads {})",
          fam_.name, layer.head_size, hv, fmt::join(kMmPrefixHeads, ", ")));
    backend_checks::check_mm_prefix_ranges(fmt::format("{} plan", fam_.name), b);
  }

  // Chunked local attention (docs/semantics.md §4): CUDA_FLASH runs a chunked layer's batch as
  // its chunk pieces (tiles.hpp chunk_piece) through the kernels' plain masks; a family that does
  // not declare it (CUDA_MLA) refuses such a layer (the selector routes it elsewhere).
  void check_chunked(const AttentionLayerParams& layer, bool mm, const char* step) const {
    const int c = layer.attention_chunk_size;
    if (c < 0)
      throw InvalidArgument(fmt::format(
          "{} {}: attention_chunk_size must be >= 0, 0 = off (got {})", fam_.name, step, c));
    if (c != 0 && !capabilities().chunked_local)
      throw Unsupported(
          fmt::format("{} {}: attention_chunk_size {} (chunked local attention) is "
                      "not supported; it declares no chunked_local",
                      fam_.name, step, c));
    if (c != 0 && mm)
      throw Unsupported(fmt::format(
          "{} {}: PrefixLM (mm_prefix) ranges with chunked local attention (chunk {}) are not "
          "supported",
          fam_.name, step, c));
  }

  std::string_view name() const override { return fam_.name; }
  const Capabilities& capabilities() const override { return fam_.capabilities(); }

  void plan(const AttentionBatch& b, const AttentionLayerParams& layer) override {
    plan_ = {};  // a plan that throws leaves no usable plan behind
    if (layer.num_heads <= 0 || layer.num_kv_heads <= 0 || layer.num_heads % layer.num_kv_heads)
      throw InvalidArgument(
          fmt::format("{} plan: num_heads ({}) must be a positive multiple of num_kv_heads ({})",
                      fam_.name, layer.num_heads, layer.num_kv_heads));
    if (b.num_seqs < 0 || (b.num_seqs > 0 && (!b.cu_seqlens_q || !b.seqused_k)))
      throw InvalidArgument(
          fmt::format("{} plan: host batch needs cu_seqlens_q and seqused_k", fam_.name));
    if (b.num_seqs > 0 && b.cu_seqlens_q[0] != 0)
      throw InvalidArgument(
          fmt::format("{} plan: cu_seqlens_q[0] must be 0 (got {})", fam_.name, b.cu_seqlens_q[0]));
    for (int s = 0; s < b.num_seqs; ++s) {
      if (b.cu_seqlens_q[s + 1] < b.cu_seqlens_q[s])
        throw InvalidArgument(
            fmt::format("{} plan: cu_seqlens_q must be non-decreasing (entry {} is {} after {})",
                        fam_.name, s + 1, b.cu_seqlens_q[s + 1], b.cu_seqlens_q[s]));
      if (b.seqused_k[s] < 0)
        throw InvalidArgument(
            fmt::format("{} plan: seqused_k[{}] = {} must be >= 0", fam_.name, s, b.seqused_k[s]));
    }
    check_mm_prefix(b, layer);
    check_chunked(layer, b.mm_prefix_offsets || b.mm_prefix_ranges, "plan");
    const int hv = layer.head_size_v ? layer.head_size_v : layer.head_size;
    BatchPlan bp;
    bp.num_seqs = b.num_seqs;
    bp.mm = b.mm_prefix_offsets != nullptr;
    bp.mm_count = bp.mm ? b.mm_prefix_offsets[b.num_seqs] : 0;
    bp.total_q = b.cu_seqlens_q ? b.cu_seqlens_q[b.num_seqs] : 0;
    bp.head_qk = layer.head_size;
    bp.head_v = hv;
    bp.num_heads = layer.num_heads;
    // A chunked causal layer's decode batch at the heads with kChunk kernels keeps its sequences
    // (the kernels bound a row's keys below by its chunk; a non-causal row's chunk bounds them
    // above too); other batches' parts and launches are planned over their chunk pieces.
    std::vector<int32_t> piece_cu, piece_keys;
    AttentionBatch pb = b;
    bool decode_rows = layer.attention_chunk_size != 0 && !fam_.geometry &&
                       !options_.chunk_pieces && layer.causal &&
                       chunk_decode_built(layer.head_size, hv);
    for (int s = 0; s < b.num_seqs && decode_rows; ++s)
      decode_rows = int64_t(b.cu_seqlens_q[s + 1] - b.cu_seqlens_q[s]) *
                        (layer.num_heads / layer.num_kv_heads) <=
                    kBlockMDecode;
    if (decode_rows) {
      bp.chunk = layer.attention_chunk_size;
      bp.chunk_kernel = true;
    } else if (layer.attention_chunk_size != 0) {
      const int C = layer.attention_chunk_size;
      piece_cu.push_back(0);
      for (int s = 0; s < b.num_seqs; ++s) {
        const int q = b.cu_seqlens_q[s + 1] - b.cu_seqlens_q[s], k = b.seqused_k[s];
        for (int j = 0; j < chunk_pieces(q, k, C); ++j) {
          const ChunkPiece piece = chunk_piece(q, k, C, j);
          piece_cu.push_back(b.cu_seqlens_q[s] + piece.row0 + piece.rows);
          piece_keys.push_back(piece.keys);
        }
      }
      bp.chunk = C;
      bp.piece_entries = b.block_table_stride > 0 ? std::min(C, b.block_table_stride) : C;
      bp.pieces = int(piece_keys.size());
      pb.num_seqs = bp.pieces;
      pb.cu_seqlens_q = piece_cu.data();
      pb.seqused_k = piece_keys.data();
      pb.block_table = nullptr;
    }
    for (const auto& [s0, s1] : part_runs(pb, layer)) {
      Part part{s0, s1 - s0, pb.cu_seqlens_q[s1] - pb.cu_seqlens_q[s0], {}};
      part.plan = plan_part(sub_batch(pb, s0, s1), layer, bp.chunk_kernel ? bp.chunk : 0);
      bp.ws_splits = std::max(bp.ws_splits, part.plan.ws_splits);
      bp.per_token_counts |= part.plan.ragged.chunk_tiles || part.plan.fp8.ragged.chunk_tiles;
      if (!bp.parts.empty() && part.toks > bp.parts[size_t(bp.main)].toks)
        bp.main = int(bp.parts.size());
      bp.parts.push_back(part);
    }
    // Split partials and LSEs of every part at one split extent, rows by absolute token: the
    // parts' slots never overlap.
    bp.workspace = (bp.ws_splits > 1 ? size_t(bp.ws_splits) * bp.total_q * layer.num_heads *
                                           (hv + 1) * sizeof(float)
                                     : 0) +
                   (bp.per_token_counts ? size_t(bp.total_q) * sizeof(int) : 0);
    if (bp.chunk && !bp.chunk_kernel) {
      bp.chunk_offset = bp.workspace;
      bp.workspace += (size_t(bp.pieces) * (2 + size_t(bp.piece_entries)) + 1) * sizeof(int32_t);
    }
    if (options_.concurrent_parts && bp.parts.size() == 2 && !side_) {
      // Made once, here: run() creates nothing.
      check_cuda(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "cudaStreamCreate",
                 fam_.name);
      check_cuda(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "cudaEventCreate",
                 fam_.name);
      check_cuda(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming), "cudaEventCreate",
                 fam_.name);
    }
    bp.valid = true;
    plan_ = std::move(bp);
    run_splits_ = 0;
    run_chunk_ = 0;
    run_form_ = -1;
    run_decode_per_sm_ = 0;
    run_early_ = false;
  }

  // The batch's parts (tiles.hpp batch_parts) where the layer has a decode-sized launch to send
  // the decodes to: CUDA_FLASH's decode form, or a family form's few row blocks (part_rows).
  std::vector<std::pair<int, int> > part_runs(const AttentionBatch& b,
                                              const AttentionLayerParams& layer) const {
    const int hv = layer.head_size_v ? layer.head_size_v : layer.head_size;
    const int group = layer.num_heads / layer.num_kv_heads;
    const int decode_rows =
        fam_.geometry ? fam_.geometry(layer, cc_, options_.mla_form).part_rows
        : has_decode_form(layer.head_size, hv, false) || has_decode_form(layer.head_size, hv, true)
            ? kBlockMDecode
            : 0;
    if (decode_rows == 0 || options_.one_part) return {{0, b.num_seqs}};
    const int64_t key_bytes =
        int64_t(layer.num_kv_heads) * (layer.head_size + (fam_.v_in_k ? 0 : hv)) * 2;
    return batch_parts(b.cu_seqlens_q, b.seqused_k, b.num_seqs, group, decode_rows, key_bytes,
                       options_.part_min_decode_bytes);
  }

  // Sequences [s0, s1) of b, host or device metadata alike: the per-sequence pointers from s0 on,
  // token offsets as they are (the kernels index q and out by absolute token; the combine finds
  // its first token at cu_seqlens_q[0]), total_q the whole batch's (the workspace's row extent).
  static AttentionBatch sub_batch(const AttentionBatch& b, int s0, int s1) {
    AttentionBatch sub = b;
    sub.num_seqs = s1 - s0;
    sub.cu_seqlens_q = b.cu_seqlens_q + s0;
    sub.seqused_k = b.seqused_k + s0;
    if (b.block_table) sub.block_table = b.block_table + int64_t(s0) * b.block_table_stride;
    if (b.mm_prefix_offsets) sub.mm_prefix_offsets = b.mm_prefix_offsets + s0;
    return sub;
  }

  // One part's launch: its form, grid and split counts.
  // chunk: a decode batch of a chunked layer, which the kChunk kernels run (its rows see a chunk
  // at most); 0 otherwise.
  Plan plan_part(const AttentionBatch& b, const AttentionLayerParams& layer, int chunk) const {
    // Ranges that widen no row (decode under a causal mask: the query is the last key) leave the
    // plan as it is; the others run a prefill form's kMm kernel (v2's, or v3's Hopper form).
    const bool mm_widens = mm_prefix_widens(b, layer);
    const int hv = layer.head_size_v ? layer.head_size_v : layer.head_size;
    const int group = layer.num_heads / layer.num_kv_heads;
    int max_rows = 0, max_k = 0;
    for (int s = 0; s < b.num_seqs; ++s) {
      max_rows = std::max(max_rows, (b.cu_seqlens_q[s + 1] - b.cu_seqlens_q[s]) * group);
      max_k = std::max(max_k, b.seqused_k[s]);
    }
    // Decode form (16-row tiles, the warps split each key tile) when every sequence's packed
    // rows fit one such tile; else the prefill form (128 rows, 32 per warp; 64 rows for heads
    // 129..256). Heads over 256 have one form: 32 rows, warps split the head dims.
    // The KV dtype is not known here: 16-bit tiles stand in for fp8 ones in this estimate (heads
    // up to 128; at 129..256 only fp8 caches have the decode form, planned below as Fp8Decode).
    // A family with its own forms says which one runs the layer.
    const bool split_keys = !fam_.geometry && !mm_widens &&
                            has_decode_form(layer.head_size, hv, false) &&
                            max_rows <= kBlockMDecode;
    // v3 (SM90): prefill runs the Hopper form. The cache's dtype arrives with run(), so the plan
    // keeps this form's launch shape beside the v2 one; it runs one CTA per SM over either cache
    // kind, so one split count serves both.
    const bool hopper = hopper_ && !split_keys &&
                        (options_.hopper_any_length
                             ? hopper_prefill_head(layer.head_size, hv)
                             : hopper_prefill_takes(layer.head_size, hv, max_k, group, layer.causal,
                                                    layer.window_left, layer.window_right));
    const FlashGeometry geo =
        fam_.geometry
            ? fam_.geometry(layer, cc_, options_.mla_form)
            : FlashGeometry{0, block_m(split_keys, layer.head_size, hv),
                            tile_keys(layer.head_size, hv, false, split_keys),
                            flash_smem_bytes(layer.head_size, hv, false, split_keys) +
                                flash_static_smem_bytes(layer.head_size, hv, false, split_keys)};
    // A form's launch for this batch: grid rows, CTAs, key tiles, CTAs per SM; its split count.
    struct Launch {
      int grid_m, tiles, per_sm;
      int64_t ctas;
    };
    // The keys a row sees behind it (a chunk narrows the window), and the most a CTA visits.
    const int window =
        visible_window(layer.window_left >= 0 ? layer.window_left : kUnboundedWindow, chunk);
    const int plan_k = chunk ? ragged_visible_keys(max_k, window) : max_k;
    auto launch_of = [&](int block_m, int tile_keys, int per_sm) {
      Launch l{std::max(1, (max_rows + block_m - 1) / block_m),
               (plan_k + tile_keys - 1) / tile_keys, per_sm, 0};
      for (int s = 0; s < b.num_seqs; ++s) {
        const int rows = (b.cu_seqlens_q[s + 1] - b.cu_seqlens_q[s]) * group;
        l.ctas += int64_t((rows + block_m - 1) / block_m) * layer.num_kv_heads;
      }
      return l;
    };
    auto splits_of = [&](const Launch& l, int lone_tiles) {
      return options_.force_num_splits > 0
                 ? std::min(options_.force_num_splits, kMaxSplits)
                 : num_splits_heuristic(l.ctas, l.tiles, sm_count_, l.per_sm, lone_tiles);
    };
    const Launch v2 =
        launch_of(geo.block_m, geo.tile_keys, ctas_per_sm(smem_per_sm_, geo.cta_smem));
    int splits = splits_of(v2, kLoneCtaTiles);
    int splits_hopper = 1, grid_m_hopper = 1;
    if (hopper) {
      // One CTA per SM: its registers, not its shared memory, bound it (tiles.hpp).
      const Launch h = launch_of(kHopperPrefillRows, hopper_prefill_tile_keys(layer.head_size, hv),
                                 kHopperPrefillCtasPerSm);
      splits_hopper = splits_of(h, kLoneCtaTiles);
      grid_m_hopper = h.grid_m;
    }
    // Batches of unequal lengths (tiles.hpp): CUDA_FLASH's decode form and a family's forms built
    // for it take a split count per sequence (ragged_splits); the other forms, on batches of one
    // row block per sequence (decode at heads over 128, or several query tokens per sequence),
    // one count from the same model (skewed_uniform_splits). The Hopper form's row blocks are no
    // smaller than v2's, so it has one per sequence too.
    auto visible_tiles = [&](int tile_keys) {
      std::vector<int> tiles(b.num_seqs);
      for (int s = 0; s < b.num_seqs; ++s)
        tiles[s] = (ragged_visible_keys(b.seqused_k[s], window) + tile_keys - 1) / tile_keys;
      return tiles;
    };
    RaggedSplits ragged;
    if (options_.force_num_splits <= 0 && !options_.uniform_splits && b.num_seqs > 1) {
      const int ctas_per_item = v2.grid_m * layer.num_kv_heads;
      if (fam_.geometry ? geo.ragged : split_keys) {
        ragged = ragged_splits(visible_tiles(geo.tile_keys).data(), b.num_seqs, ctas_per_item,
                               sm_count_, v2.per_sm, splits);
        if (ragged.items > 65535) ragged = {};
      } else if (v2.grid_m == 1) {
        splits = skewed_uniform_splits(visible_tiles(geo.tile_keys).data(), b.num_seqs,
                                       ctas_per_item, sm_count_, v2.per_sm, splits);
        if (hopper)
          splits_hopper = skewed_uniform_splits(
              visible_tiles(hopper_prefill_tile_keys(layer.head_size, hv)).data(), b.num_seqs,
              layer.num_kv_heads, sm_count_, kHopperPrefillCtasPerSm, splits_hopper);
      }
    }
    // The cache (page size, dtype) arrives with run(): the count for a 16-bit cache whose pages
    // hold whole tiles is kept beside the default one, and the workspace fits either. Its lone
    // CTAs leave the next layer's CTAs free slots; where the default count's grid copies its
    // first tiles early instead (tiles.hpp early_copies_pay; v2.per_sm is the kernel's own count
    // of CTAs per SM, the floor's two at head 128), that count holds for those pages.
    const bool early = copies_early(b.earlier_rows_settled, v2.ctas * splits,
                                    int64_t(sm_count_) * v2.per_sm, false);
    const int splits_paged = split_keys && !early ? splits_of(v2, kLoneCtaTilesPaged) : splits;
    // Where the 16-bit plan runs a prefill form, fp8 caches may still take the decode form
    // (tiles.hpp fp8_side_decode), planned beside it: the plan does not know the cache dtype, and
    // run() picks.
    Fp8Decode fp8;
    if (!fam_.geometry && !split_keys && !mm_widens &&
        fp8_side_decode(layer.head_size, hv, max_rows)) {
      // Speculative rows (heads up to 128) are planned as the 16-bit decode form would be: its
      // tiles and shared memory (the fp8 kernel converts in registers), as measured.
      const bool spec_rows = has_decode_form(layer.head_size, hv, false);
      fp8.on = true;
      fp8.tile_keys = tile_keys(layer.head_size, hv, !spec_rows, true);
      const Launch f = launch_of(
          kBlockMDecode, fp8.tile_keys,
          ctas_per_sm(smem_per_sm_,
                      flash_smem_bytes(layer.head_size, hv, !spec_rows, true) +
                          flash_static_smem_bytes(layer.head_size, hv, !spec_rows, true)));
      fp8.grid_m = f.grid_m;
      fp8.splits = splits_of(f, kLoneCtaTiles);
      fp8.splits_paged = fp8_decode_paged_count(layer.head_size, hv) && !spec_rows
                             ? splits_of(f, kLoneCtaTilesPaged)
                             : fp8.splits;
      if (options_.force_num_splits <= 0 && !options_.uniform_splits && b.num_seqs > 1) {
        fp8.ragged = ragged_splits(visible_tiles(fp8.tile_keys).data(), b.num_seqs,
                                   f.grid_m * layer.num_kv_heads, sm_count_, f.per_sm, fp8.splits);
        if (fp8.ragged.items > 65535) fp8.ragged = {};
      }
    }
    const int uniform_most =
        std::max({splits, splits_paged, splits_hopper, fp8.splits, fp8.splits_paged});
    if (int64_t(b.num_seqs) * uniform_most > 65535)
      throw Unsupported(fmt::format("{} plan: num_seqs x splits = {} exceeds 65535", fam_.name,
                                    int64_t(b.num_seqs) * uniform_most));
    Plan pl;
    pl.mm_widens = mm_widens;
    pl.grid_m = v2.grid_m;
    pl.split_keys = split_keys;
    pl.form = geo.form;
    pl.splits = splits;
    pl.splits_paged = splits_paged;
    pl.hopper = hopper;
    pl.splits_hopper = splits_hopper;
    pl.grid_m_hopper = grid_m_hopper;
    pl.tile_keys = geo.tile_keys;
    pl.ragged = ragged;
    pl.fp8 = fp8;
    pl.ws_splits = std::max({uniform_most, ragged.max_splits, fp8.ragged.max_splits});
    return pl;
  }

  size_t workspace_bytes() const override { return plan_.workspace; }

  void run(const AttentionArgs& a, void* stream) override {
    const AttentionLayerParams& L = a.layer;
    const KvCacheView& kv = a.kv;
    const int hv = L.head_size_v ? L.head_size_v : L.head_size;
    if (!plan_.valid)
      throw InvalidArgument(fmt::format("{} run: plan() was not called", fam_.name));
    check_chunked(L, plan_.mm, "run");
    if (L.attention_chunk_size != plan_.chunk)
      throw InvalidArgument(
          fmt::format("{} run: attention_chunk_size {} differs from the plan's {}", fam_.name,
                      L.attention_chunk_size, plan_.chunk));
    if ((a.batch.mm_prefix_offsets != nullptr) != plan_.mm ||
        (a.batch.mm_prefix_ranges != nullptr) != plan_.mm)
      throw InvalidArgument(fmt::format(
          "{} run: the batch gives {} PrefixLM ranges, the plan had {} (mm_prefix_offsets and "
          "mm_prefix_ranges, both or neither, as in plan())",
          fam_.name, a.batch.mm_prefix_offsets || a.batch.mm_prefix_ranges ? "its" : "no",
          plan_.mm ? "some" : "none"));
    if (a.batch.num_seqs != plan_.num_seqs || a.batch.total_q != plan_.total_q ||
        L.head_size != plan_.head_qk || hv != plan_.head_v || L.num_heads != plan_.num_heads)
      throw InvalidArgument(fmt::format(
          "{} run: batch/layer (seqs {}, query rows {}, heads {}, head {}/{}) differ from "
          "the plan (seqs {}, query rows {}, heads {}, head {}/{})",
          fam_.name, a.batch.num_seqs, a.batch.total_q, L.num_heads, L.head_size, hv,
          plan_.num_seqs, plan_.total_q, plan_.num_heads, plan_.head_qk, plan_.head_v));
    if (a.batch.num_seqs == 0) return;
    if (!a.q || !a.out || !kv.k)
      throw InvalidArgument(fmt::format("{} run: q, out and k must be non-null", fam_.name));
    if (bool(kv.v) == fam_.v_in_k)
      throw InvalidArgument(
          fam_.v_in_k ? fmt::format("{} run: the latent cache has no V tensor (v must be null: V "
                                    "is the first head_size_v elements of each K row)",
                                    fam_.name)
                      : fmt::format("{} run: v must be non-null (a cache without V, MLA's latent "
                                    "one, is CUDA_MLA's)",
                                    fam_.name));
    // V's rows: its own tensor, or the K rows themselves (their leading head_v elements).
    const KvCacheView vv = [&] {
      KvCacheView c = kv;
      if (fam_.v_in_k) {
        c.v = kv.k;
        c.v_stride_block = kv.stride_block;
        c.v_stride_head = kv.stride_head;
        c.v_stride_token = kv.stride_token;
        c.v_scale = kv.k_scale;
      }
      return c;
    }();
    if (kv.num_kv_heads != L.num_kv_heads || kv.head_size != L.head_size ||
        (kv.head_size_v ? kv.head_size_v : kv.head_size) != hv)
      throw InvalidArgument(fmt::format(
          "{} run: cache (kv heads {}, head {}/{}) disagrees with the layer ({}, {}/{})", fam_.name,
          kv.num_kv_heads, kv.head_size, kv.head_size_v, L.num_kv_heads, L.head_size, hv));
    if (kv.block_size <= 0)
      throw InvalidArgument(
          fmt::format("{} run: block_size {} must be positive", fam_.name, kv.block_size));
    if (fam_.max_k_bytes > 0 && int64_t(kv.num_blocks) * kv.stride_block > fam_.max_k_bytes)
      throw Unsupported(
          fmt::format("{}: a K tensor of {} blocks x {} bytes exceeds the {} bytes "
                      "its kernels address",
                      fam_.name, kv.num_blocks, kv.stride_block, fam_.max_k_bytes));
    KvKind kind{};
    if (!kv_kind_for(kv.dtype, L.dtype, &kind) || kv.dtype == KvCacheDType::kAuto)
      throw Unsupported(fmt::format("{}: kv_cache_dtype {} with dtype {} is not built", fam_.name,
                                    to_string(kv.dtype), to_string(L.dtype)));
    const int inst = fam_.find_instance(L.head_size, hv, L.dtype, kind);
    if (inst < 0)
      throw Unsupported(
          fmt::format("{}: no kernel for head_size {}/{} dtype {} KV {}; built head sizes: {}",
                      fam_.name, L.head_size, hv, to_string(L.dtype), to_string(kv.dtype),
                      fmt::join(fam_.capabilities().head_sizes.sizes, ", ")));
    if (!aligned16(a.q) || a.q_stride_token % 8 || a.q_stride_head % 8 || !aligned16(kv.k) ||
        !aligned16(vv.v) || kv.stride_block % 16 || kv.stride_head % 16 || kv.stride_token % 16 ||
        vv.v_stride_block % 16 || vv.v_stride_head % 16 || vv.v_stride_token % 16 ||
        (reinterpret_cast<uintptr_t>(a.out) & 3u) || a.out_stride_token % 2 ||
        a.out_stride_head % 2)
      throw InvalidArgument(fmt::format(
          "{} run: q and K/V rows must be 16-byte aligned (q strides multiples of 8 "
          "elements, cache byte strides multiples of 16), out 4-byte aligned with even strides",
          fam_.name));
    if (plan_.workspace && !a.workspace)
      throw InvalidArgument(
          fmt::format("{} run: the plan needs {} workspace bytes", fam_.name, plan_.workspace));
    // The rules of docs/semantics.md §6, worded as the CPU backends word them.
    if (!std::isfinite(L.scale))
      throw InvalidArgument(
          fmt::format("{} run: scale must be finite (got {})", fam_.name, L.scale));
    if (!std::isfinite(L.logits_soft_cap) || L.logits_soft_cap < 0.f)
      throw InvalidArgument(
          fmt::format("{} run: logits_soft_cap must be finite and >= 0, 0 = off (got {})",
                      fam_.name, L.logits_soft_cap));
    if (L.window_left < -1 || L.window_right < -1)
      throw InvalidArgument(
          fmt::format("{} run: window_left/window_right must be >= -1 (got {}, {})", fam_.name,
                      L.window_left, L.window_right));

    const auto st = static_cast<cudaStream_t>(stream);
    if (options_.check_args) check_batch_on_device(a, st);

    FlashParams p;
    p.q = a.q;
    p.q_stride_token = a.q_stride_token;
    p.q_stride_head = a.q_stride_head;
    p.out = a.out;
    p.o_stride_token = a.out_stride_token;
    p.o_stride_head = a.out_stride_head;
    p.out_vec16 = aligned16(a.out) && a.out_stride_token % 8 == 0 && a.out_stride_head % 8 == 0;
    p.lse = a.lse;
    p.k = static_cast<const char*>(kv.k);
    p.v = static_cast<const char*>(vv.v);
    p.k_stride_block = kv.stride_block;
    p.k_stride_head = kv.stride_head;
    p.k_stride_token = kv.stride_token;
    p.v_stride_block = vv.v_stride_block;
    p.v_stride_head = vv.v_stride_head;
    p.v_stride_token = vv.v_stride_token;
    if (kind == KvKind::kFp8) {
      p.k_scale = kv.k_scale;
      p.v_scale = vv.v_scale;
      p.scale_per_head = kv.scale_granularity == ScaleGranularity::kPerHead;
      p.kv_e5m2 = kv.dtype == KvCacheDType::kFp8E5M2;
    } else if (kv.scale_granularity != ScaleGranularity::kNone) {
      throw InvalidArgument(fmt::format("{} run: {} storage takes no scales (got {})", fam_.name,
                                        to_string(kv.dtype), to_string(kv.scale_granularity)));
    }
    p.block_table_stride = a.batch.block_table_stride;
    p.block_size = kv.block_size;
    p.bdiv = make_fast_div(uint32_t(kv.block_size));
    p.num_heads = L.num_heads;
    p.num_kv_heads = L.num_kv_heads;
    p.group = L.num_heads / L.num_kv_heads;
    p.gdiv = make_fast_div(uint32_t(p.group));
    p.scale = L.scale;
    p.scale_log2 = L.scale * 1.4426950408889634f;
    p.softcap = L.logits_soft_cap;
    p.alibi = L.alibi_slopes;
    p.sinks = L.sinks;
    p.window_left = L.window_left >= 0 ? L.window_left : kUnboundedWindow;
    int right = L.window_right >= 0 ? L.window_right : kUnboundedWindow;
    if (L.causal) right = std::min(right, 0);
    p.window_right = right;
    p.total_q_capacity = plan_.total_q;
    p.head_v = hv;
    p.pdl = pdl_;
    bool settled = a.batch.earlier_rows_settled;
    if (plan_.ws_splits > 1) {
      p.ws_o = static_cast<float*>(a.workspace);
      p.ws_lse = p.ws_o + size_t(plan_.ws_splits) * plan_.total_q * L.num_heads * hv;
      if (plan_.per_token_counts)
        p.ws_nsplit = reinterpret_cast<int*>(p.ws_lse +
                                             size_t(plan_.ws_splits) * plan_.total_q * L.num_heads);
    }
    // A chunked layer's pieces, built in the workspace before the attention kernels read them.
    // Those kernels then launch in stream order: a programmatic dependent reads the metadata
    // before its wait (pdl.cuh), which the piece kernel is still writing. A decode batch's kChunk
    // kernels take the chunk themselves.
    AttentionBatch batch = a.batch;
    if (plan_.chunk_kernel) {
      p.chunk = plan_.chunk;
      p.cdiv = make_fast_div(uint32_t(plan_.chunk));
    } else if (plan_.chunk) {
      if (plan_.chunk % kv.block_size)
        throw Unsupported(fmt::format(
            "{} run: attention_chunk_size {} is not a multiple of the block size {} (a chunk's "
            "keys are read as whole blocks; the KV plan picks block sizes that divide it)",
            fam_.name, plan_.chunk, kv.block_size));
      if (!a.batch.block_table)
        throw InvalidArgument(fmt::format(
            "{} run: chunked local attention reads the paged cache; block_table is null",
            fam_.name));
      if (plan_.pieces == 0) return;  // no query rows
      auto* base = reinterpret_cast<int32_t*>(static_cast<char*>(a.workspace) + plan_.chunk_offset);
      ChunkBatchLaunch c{};
      c.cu_seqlens_q = a.batch.cu_seqlens_q;
      c.seqused_k = a.batch.seqused_k;
      c.block_table = a.batch.block_table;
      c.num_seqs = a.batch.num_seqs;
      c.block_table_stride = a.batch.block_table_stride;
      c.chunk = plan_.chunk;
      c.block_size = kv.block_size;
      c.capacity = plan_.pieces;
      c.out_stride = std::min(plan_.piece_entries, plan_.chunk / kv.block_size);
      c.out_cu_seqlens_q = base;
      c.out_seqused_k = base + plan_.pieces + 1;
      c.out_block_table = base + 2 * plan_.pieces + 1;
      launch_chunk_batch(c, pdl_, st);
      check_cuda(cudaGetLastError(), "chunk batch kernel launch", fam_.name);
      batch.num_seqs = plan_.pieces;
      batch.cu_seqlens_q = c.out_cu_seqlens_q;
      batch.seqused_k = c.out_seqused_k;
      batch.block_table = c.out_block_table;
      batch.block_table_stride = p.block_table_stride = c.out_stride;
      p.pdl = 0;
      settled = false;
    }
    // Concurrent parts: the part with the most query tokens, issued first, on the side stream;
    // the other on run()'s (issuing the other first or raising the side stream's priority
    // measured the same, session 30).
    const bool fork = options_.concurrent_parts && plan_.parts.size() == 2;
    if (fork) {
      check_cuda(cudaEventRecord(fork_, st), "cudaEventRecord", fam_.name);
      check_cuda(cudaStreamWaitEvent(side_, fork_, 0), "cudaStreamWaitEvent", fam_.name);
    }
    for (size_t k = 0; k < plan_.parts.size(); ++k) {
      const size_t i = fork ? size_t(k == 0 ? plan_.main : 1 - plan_.main) : k;
      const cudaStream_t pst = fork && int(i) == plan_.main ? side_ : st;
      const Part& part = plan_.parts[i];
      const Plan& pl = part.plan;
      const AttentionBatch sub = sub_batch(batch, part.seq0, part.seq0 + part.seqs);
      p.cu_seqlens_q = sub.cu_seqlens_q;
      p.seqused_k = sub.seqused_k;
      p.block_table = sub.block_table;
      p.num_seqs = sub.num_seqs;
      p.mm_offsets = pl.mm_widens ? sub.mm_prefix_offsets : nullptr;
      p.mm_ranges = pl.mm_widens ? sub.mm_prefix_ranges : nullptr;
      const bool fp8_decode = pl.fp8.on && kind == KvKind::kFp8;
      const bool hopper = pl.hopper && !fp8_decode;
      const bool split_form = (pl.split_keys || fp8_decode) && fam_.has_split_keys(inst);
      const RaggedSplits& planned_ragged = fp8_decode ? pl.fp8.ragged : pl.ragged;
      const bool ragged = planned_ragged.chunk_tiles > 0 && (fam_.geometry || split_form);
      // Pages that hold whole tiles may take their own uniform count (kLoneCtaTilesPaged).
      const int splits = [&] {
        if (hopper) return pl.splits_hopper;
        if (ragged) return planned_ragged.max_splits;
        if (fp8_decode)
          return takes_paged_count(true, L.head_size, hv, kv.block_size, pl.fp8.tile_keys)
                     ? pl.fp8.splits_paged
                     : pl.fp8.splits;
        return takes_paged_count(kind == KvKind::kFp8, L.head_size, hv, kv.block_size, pl.tile_keys)
                   ? pl.splits_paged
                   : pl.splits;
      }();
      p.num_splits = splits;
      p.split_chunk =
          ragged ? planned_ragged.chunk_tiles * (fp8_decode ? pl.fp8.tile_keys : pl.tile_keys) : 0;
      p.grid_items = ragged ? planned_ragged.items : 0;
      p.form = hopper ? kHopperPrefillForm : pl.form;
      const int grid_m = hopper ? pl.grid_m_hopper : fp8_decode ? pl.fp8.grid_m : pl.grid_m;
      // The decode form's shared-memory floor, from this launch's CTAs (tiles.hpp).
      p.smem_floor = 0;
      p.early_kv = 0;
      int decode_per_sm = 0;
      if (split_form && !fam_.geometry) {
        const bool fp8 = kind == KvKind::kFp8;
        const int64_t ctas = int64_t(grid_m) * L.num_kv_heads *
                             (ragged ? int64_t(p.grid_items) : int64_t(p.num_seqs) * splits);
        const int smem = flash_smem_bytes(L.head_size, hv, fp8, true);
        const int fixed = flash_static_smem_bytes(L.head_size, hv, fp8, true);
        // The floor is two CTAs per SM where it was measured (SM90's 227 KiB); on a device where
        // it gives another count (SM80's 164 KiB: one) the rule keeps the kernel's own.
        const int own = ctas_per_sm(smem_per_sm_, smem + fixed);
        const int floored = ctas_per_sm(smem_per_sm_, std::max(smem, kDecodeMinSmem) + fixed);
        p.smem_floor =
            options_.decode_occupancy == 1 ||
            (options_.decode_occupancy == 0 && floored == 2 && decode_floor(ctas, sm_count_, own));
        decode_per_sm = p.smem_floor ? floored : own;
        p.early_kv = copies_early(settled, ctas, int64_t(sm_count_) * decode_per_sm, ragged);
      }
      if (int(i) == plan_.main) {  // what planned_splits() and planned_form() report
        run_splits_ = splits;
        run_chunk_ = p.split_chunk;
        run_form_ = split_form && !fam_.geometry ? kV2DecodeForm : p.form;
        run_decode_per_sm_ = decode_per_sm;
        run_early_ = p.early_kv != 0;
      }
      fam_.launch(inst, p, grid_m, split_form, pst);
      check_cuda(cudaGetLastError(), "flash kernel launch", fam_.name);
      if (splits > 1 && part.toks > 0) {  // (a grid of no rows is no launch)
        launch_combine(L.dtype, p, int64_t(part.toks) * L.num_heads, cc_major_ >= 9, pst);
        check_cuda(cudaGetLastError(), "combine kernel launch", fam_.name);
      }
    }
    if (fork) {
      check_cuda(cudaEventRecord(join_, side_), "cudaEventRecord", fam_.name);
      check_cuda(cudaStreamWaitEvent(st, join_, 0), "cudaStreamWaitEvent", fam_.name);
    }
  }

  void write_kv(const KvWriteArgs& a, void* stream) override {
    if (a.num_tokens < 0 || (a.num_tokens > 0 && (!a.k || !a.slot_mapping || !a.cache.k)))
      throw InvalidArgument(
          fmt::format("{} write_kv: k, slot_mapping and cache.k must be non-null", fam_.name));
    // A null v on a cache with V would write K alone and leave stale V rows behind.
    if (a.num_tokens > 0 && bool(a.v) != bool(a.cache.v))
      throw InvalidArgument(fmt::format(
          "{} write_kv: v must be given exactly when the cache has a V tensor (got v {}, "
          "cache v {}; MLA latent caches take k only)",
          fam_.name, a.v ? "set" : "null", a.cache.v ? "set" : "null"));
    const KvCacheView& c = a.cache;
    KvWriteLaunch p{};
    p.in_kind = a.dtype == DType::kFloat32 ? 4 : a.dtype == DType::kFloat16 ? 0 : 1;
    p.out_kind = storage_kind(c.dtype);
    p.num_tensors = a.v ? 2 : 1;
    p.src[0] = a.k;
    p.src[1] = a.v;
    p.src_stride_token[0] = a.k_stride_token;
    p.src_stride_head[0] = a.k_stride_head;
    p.src_stride_token[1] = a.v_stride_token;
    p.src_stride_head[1] = a.v_stride_head;
    p.head[0] = c.head_size;
    p.head[1] = c.head_size_v ? c.head_size_v : c.head_size;
    p.dst = cache_tensors(c);
    const bool quant = p.out_kind >= 2;
    p.scale[0] = quant ? c.k_scale : nullptr;
    p.scale[1] = quant ? c.v_scale : nullptr;
    p.scale_per_head = c.scale_granularity == ScaleGranularity::kPerHead;
    p.slot_mapping = a.slot_mapping;
    p.block_size = c.block_size;
    p.num_kv_heads = c.num_kv_heads;
    p.num_tokens = a.num_tokens;
    if (options_.check_args && a.num_tokens > 0) {
      const int64_t slots = int64_t(c.num_blocks) * c.block_size;
      const auto st = static_cast<cudaStream_t>(stream);
      const SlotCheckLaunch sc{scale_values(c), a.slot_mapping, a.num_tokens, slots, check_report_};
      const auto r = device_check(st, "write_kv", [&] { launch_check_slots(sc, st); });
      if (r[0] >= 0) {
        const CheckKey k(r[0]);
        throw InvalidArgument(fmt::format(
            "{} write_kv: {} (device check)", fam_.name,
            k.phase == kCheckValues
                ? value_message(k, r[1])
                : backend_checks::slot_rule_message(k.seq << 28 | k.entry, r[1], slots)));
      }
    }
    launch_kv_write(p, stream);
    check_cuda(cudaGetLastError(), "kv write kernel launch", fam_.name);
  }

  // Before a run(): the part with the most query tokens.
  const Plan* main_part() const {
    return plan_.parts.empty() ? nullptr : &plan_.parts[size_t(plan_.main)].plan;
  }
  int planned_splits() const {
    if (run_splits_) return run_splits_;
    const Plan* pl = main_part();
    return !pl ? 0 : pl->ragged.chunk_tiles ? pl->ragged.max_splits : pl->splits;
  }
  int planned_split_chunk() const {
    if (run_splits_) return run_chunk_;
    const Plan* pl = main_part();
    return pl ? pl->ragged.chunk_tiles * pl->tile_keys : 0;
  }
  int planned_form() const {
    if (!plan_.valid) return -1;
    if (run_form_ >= 0) return run_form_;
    const Plan* pl = main_part();
    return !pl ? -1 : pl->hopper ? kHopperPrefillForm : pl->split_keys ? kV2DecodeForm : pl->form;
  }
  int planned_parts() const { return int(plan_.parts.size()); }
  int run_decode_ctas_per_sm() const { return run_decode_per_sm_; }
  bool run_decode_early_copies() const { return run_early_; }

 private:
  // Whether a decode-form launch of `ctas` CTAs on `slots` copies its first tiles before its wait:
  // a dependent launch of a settled batch, by CudaFlashOptions::early_copies.
  bool copies_early(bool settled, int64_t ctas, int64_t slots, bool ragged) const {
    return pdl_ && settled && options_.early_copies != 2 &&
           (options_.early_copies == 1 || early_copies_pay(ctas, slots, ragged));
  }

  // check_args: runs `launch` (a check kernel that writes check_report_) on st and returns the
  // report (launch.hpp); refused inside a graph capture, which cannot hold the sync.
  template <typename Launch>
  std::array<int64_t, 4> device_check(cudaStream_t st, const char* step, Launch&& launch) const {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    check_cuda(cudaStreamIsCapturing(st, &capture), "cudaStreamIsCapturing", fam_.name);
    if (capture != cudaStreamCaptureStatusNone)
      throw InvalidArgument(fmt::format(
          "{} {}: the device argument checks (CudaFlashOptions::check_args, "
          "ATTNKIT_CUDA_CHECK_ARGS=1) read their verdict back with a stream sync, which a graph "
          "capture cannot hold; capture with them off",
          fam_.name, step));
    launch();
    check_cuda(cudaGetLastError(), "argument check kernel launch", fam_.name);
    std::array<int64_t, 4> r{};
    check_cuda(cudaMemcpyAsync(r.data(), check_report_, sizeof r, cudaMemcpyDeviceToHost, st),
               "cudaMemcpyAsync", fam_.name);
    check_cuda(cudaStreamSynchronize(st), "argument check", fam_.name);
    return r;
  }
  // A reported key's fields (launch.hpp).
  struct CheckKey {
    int phase, rule;
    int64_t seq, entry;
    explicit CheckKey(int64_t key)
        : phase(int(key >> 60)),
          rule(int(key >> 28 & 15)),
          seq(key >> 32 & (kCheckMaxSeqs - 1)),
          entry(key & (kCheckMaxEntry - 1)) {}
  };
  // The kernels' rule codes are backend_checks' (validate.hpp), which word them.
  static_assert(kCheckCuFirst == int(backend_checks::BatchRule::kCuFirst) &&
                    kCheckCuTotal == int(backend_checks::BatchRule::kCuTotal) &&
                    kCheckQDecreasing == int(backend_checks::BatchRule::kQDecreasing) &&
                    kCheckQMax == int(backend_checks::BatchRule::kQMax) &&
                    kCheckKNegative == int(backend_checks::BatchRule::kKNegative) &&
                    kCheckKMax == int(backend_checks::BatchRule::kKMax) &&
                    kCheckKRow == int(backend_checks::BatchRule::kKRow) &&
                    kCheckBlock == int(backend_checks::BatchRule::kBlock),
                "the device checks' batch rules are backend_checks::BatchRule's");
  static_assert(kCheckSlope == int(backend_checks::ValueRule::kSlope) &&
                    kCheckSink == int(backend_checks::ValueRule::kSink) &&
                    kCheckKScale == int(backend_checks::ValueRule::kKScale) &&
                    kCheckVScale == int(backend_checks::ValueRule::kVScale),
                "the device checks' value rules are backend_checks::ValueRule's");
  static_assert(kCheckMmFirst == int(backend_checks::MmRule::kFirst) &&
                    kCheckMmOffsets == int(backend_checks::MmRule::kOffsets) &&
                    kCheckMmOrder == int(backend_checks::MmRule::kOrder) &&
                    kCheckMmPastSeqused == int(backend_checks::MmRule::kPastSeqused),
                "the device checks' PrefixLM rules are backend_checks::MmRule's");
  static std::string value_message(const CheckKey& k, int64_t bits) {
    return backend_checks::value_rule_message(backend_checks::ValueRule(k.rule), int(k.entry),
                                              std::bit_cast<float>(uint32_t(bits)));
  }
  // The cache's scales as check_args reads them: those the CPU checks cover.
  static ValueCheckLaunch scale_values(const KvCacheView& kv) {
    const backend_checks::CheckedScales sc = backend_checks::checked_scales(kv);
    ValueCheckLaunch v{};
    v.k_scale = sc.k;
    v.v_scale = sc.v;
    v.num_scales = sc.count;
    return v;
  }

  // check_args for run(): the layer's slopes and sinks, the cache's scales, the batch's arrays
  // and its PrefixLM ranges, with the messages of backend_checks::check_attention_args.
  void check_batch_on_device(const AttentionArgs& a, cudaStream_t st) const {
    const AttentionBatch& b = a.batch;
    const std::string who = fmt::format("{} run", fam_.name);
    if (!b.cu_seqlens_q || !b.seqused_k || !b.block_table)
      throw InvalidArgument(fmt::format(
          "{}: cu_seqlens_q, seqused_k and block_table must not be null when num_seqs > 0", who));
    if (b.block_table_stride < 0 || b.block_table_stride >= kCheckMaxEntry ||
        b.num_seqs >= kCheckMaxSeqs || plan_.mm_count >= kCheckMaxEntry / 2)
      throw InvalidArgument(fmt::format(
          "{}: block_table_stride {}, num_seqs {} or the PrefixLM range count {} is past the "
          "device checks' bounds (2^28, 2^28, 2^27)",
          who, b.block_table_stride, b.num_seqs, plan_.mm_count));
    ValueCheckLaunch values = scale_values(a.kv);
    values.slopes = a.layer.alibi_slopes;
    values.sinks = a.layer.sinks;
    values.num_heads = a.layer.num_heads;
    const BatchCheckLaunch c{values,
                             b.cu_seqlens_q,
                             b.seqused_k,
                             b.block_table,
                             plan_.mm ? b.mm_prefix_offsets : nullptr,
                             plan_.mm ? b.mm_prefix_ranges : nullptr,
                             plan_.mm_count,
                             b.num_seqs,
                             b.total_q,
                             b.max_seqlen_q,
                             b.max_seqlen_k,
                             b.block_table_stride,
                             a.kv.block_size,
                             a.kv.num_blocks,
                             check_report_};
    const auto r = device_check(st, "run", [&] { launch_check_batch(c, st); });
    if (r[0] < 0) return;
    const CheckKey k(r[0]);
    std::string rule_text;
    if (k.phase == kCheckValues)
      rule_text = value_message(k, r[1]);
    else if (k.phase == kCheckBatch)
      rule_text =
          backend_checks::batch_rule_message(backend_checks::BatchRule(k.rule), b, a.kv.block_size,
                                             a.kv.num_blocks, int(k.seq), k.entry, r[1]);
    else if (k.rule == kCheckMmCount)
      rule_text = fmt::format(
          "mm_prefix_offsets[num_seqs] must equal the planned PrefixLM range count (got {}, "
          "expected {})",
          r[1], r[2]);
    else
      rule_text = backend_checks::mm_rule_message(backend_checks::MmRule(k.rule), int(k.seq), r[1],
                                                  r[2], r[3]);
    throw InvalidArgument(fmt::format("{}: {} (device check)", who, rule_text));
  }

  const FlashFamily& fam_;
  CudaFlashOptions options_;
  int sm_count_ = 0, smem_per_sm_ = 0, cc_major_ = 0, cc_ = 0;
  BatchPlan plan_;
  int run_splits_ = 0;         // the count the last run() launched with (0: none since the plan)
  int run_chunk_ = 0;          // the last run's keys per split of a ragged plan (0: uniform)
  int run_form_ = -1;          // the form the last run() launched (-1: none since the plan)
  int run_decode_per_sm_ = 0;  // its decode form's CTAs per SM (0: none)
  bool run_early_ = false;     // whether that launch copied its first tiles before its wait
  bool hopper_ = false;        // CUDA_FLASH v3 on SM90: prefill plans may take the Hopper form
  bool pdl_ = false;           // decode kernels launched as programmatic dependents (pdl.cuh)
  // concurrent_parts: the second stream and the events that fork it from run()'s and join it back
  cudaStream_t side_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
  int64_t* check_report_ = nullptr;  // check_args: the check kernels' [4] report
};

const FlashFamily& flash_family() {
  static const FlashFamily f{"CUDA_FLASH",
                             cuda_flash_capabilities,
                             false,
                             find_flash_instance,
                             launch_flash,
                             flash_has_split_keys,
                             prepare_flash_kernels,
                             0,
                             nullptr};
  return f;
}

class CudaPageZeroer final : public BlockZeroer {
 public:
  CudaPageZeroer(std::vector<void*> tensors, int64_t page_bytes, int num_blocks, void* stream)
      : num_tensors_(int(tensors.size())),
        num_blocks_(num_blocks),
        page_bytes_(page_bytes),
        stream_(stream) {
    if (page_bytes <= 0 || num_blocks <= 0 || tensors.empty() || tensors.size() > 65535)
      throw InvalidArgument(fmt::format(
          "CUDA page zeroer: needs page_bytes > 0, num_blocks > 0 and 1..65535 tensors (got {} "
          "bytes, {} blocks, {} tensors)",
          page_bytes, num_blocks, tensors.size()));
    for (size_t j = 0; j < tensors.size(); ++j)
      if (!tensors[j]) throw InvalidArgument(fmt::format("CUDA page zeroer: tensor {} is null", j));
    check_cuda(cudaMalloc(&tensors_, tensors.size() * sizeof(void*)), "cudaMalloc");
    check_cuda(cudaMemcpy(tensors_, tensors.data(), tensors.size() * sizeof(void*),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy");
  }
  ~CudaPageZeroer() override {
    cudaFree(tensors_);
    if (ids_) cudaFree(ids_);
  }
  CudaPageZeroer(const CudaPageZeroer&) = delete;
  CudaPageZeroer& operator=(const CudaPageZeroer&) = delete;
  void zero_blocks(std::span<const int32_t> block_ids) override {
    if (block_ids.empty()) return;
    check_block_ids(block_ids, num_blocks_);
    if (block_ids.size() > capacity_) {
      if (ids_) check_cuda(cudaFree(ids_), "cudaFree");
      ids_ = nullptr;
      check_cuda(cudaMalloc(&ids_, block_ids.size() * sizeof(int32_t)), "cudaMalloc");
      capacity_ = block_ids.size();
    }
    auto s = static_cast<cudaStream_t>(stream_);
    check_cuda(cudaMemcpyAsync(ids_, block_ids.data(), block_ids.size() * sizeof(int32_t),
                               cudaMemcpyHostToDevice, s),
               "cudaMemcpyAsync");
    launch_zero_pages({reinterpret_cast<char* const*>(tensors_), page_bytes_, ids_, num_tensors_,
                       int(block_ids.size())},
                      s);
    check_cuda(cudaGetLastError(), "zero-pages kernel launch");
  }

 private:
  int num_tensors_, num_blocks_;
  int64_t page_bytes_;
  void* stream_;
  void** tensors_ = nullptr;
  int32_t* ids_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace

namespace cuda_flash {
std::unique_ptr<AttentionBackend> make_flash_family_backend(const FlashFamily& family,
                                                            const CudaFlashOptions& options) {
  return std::make_unique<CudaFlashBackend>(family, options);
}
}  // namespace cuda_flash

std::unique_ptr<AttentionBackend> make_cuda_flash_backend(const CudaFlashOptions& options) {
  return make_flash_family_backend(flash_family(), options);
}

int cuda_flash_planned_splits(const AttentionBackend& b) {
  auto* c = dynamic_cast<const CudaFlashBackend*>(&b);
  return c ? c->planned_splits() : 0;
}

int cuda_flash_planned_split_chunk(const AttentionBackend& b) {
  auto* c = dynamic_cast<const CudaFlashBackend*>(&b);
  return c ? c->planned_split_chunk() : 0;
}

int cuda_flash_planned_form(const AttentionBackend& b) {
  auto* c = dynamic_cast<const CudaFlashBackend*>(&b);
  return c ? c->planned_form() : -1;
}

int cuda_flash_planned_parts(const AttentionBackend& b) {
  auto* c = dynamic_cast<const CudaFlashBackend*>(&b);
  return c ? c->planned_parts() : 0;
}

int cuda_flash_decode_ctas_per_sm(const AttentionBackend& b) {
  auto* c = dynamic_cast<const CudaFlashBackend*>(&b);
  return c ? c->run_decode_ctas_per_sm() : 0;
}

bool cuda_flash_decode_early_copies(const AttentionBackend& b) {
  auto* c = dynamic_cast<const CudaFlashBackend*>(&b);
  return c && c->run_decode_early_copies();
}

std::unique_ptr<BlockZeroer> make_cuda_page_zeroer(std::vector<void*> tensors, int64_t page_bytes,
                                                   int num_blocks, void* stream) {
  return std::make_unique<CudaPageZeroer>(std::move(tensors), page_bytes, num_blocks, stream);
}

#endif

}  // namespace attnkit
