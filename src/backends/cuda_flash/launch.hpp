// Host entry points of the CUDA_FLASH kernels (defined in the .cu files, present only in CUDA
// builds). No CUDA types here: streams travel as void* (a cudaStream_t).
#pragma once

#include <cstdint>

#include "attnkit/types.hpp"
#include "backends/cuda_flash/flash_params.hpp"

namespace attnkit::cuda_flash {

// Raises each kernel's dynamic shared-memory limit (once, outside any graph capture) on a device
// of compute capability cc (v3's Hopper kernels on SM90 only).
void prepare_flash_kernels(int cc);
// Launches manifest entry `instance` over grid (m_blocks, num_kv_heads, num_seqs * num_splits).
// p.form kHopperPrefillForm (tiles.hpp) runs v3's Hopper prefill form; otherwise split_keys picks
// v2's decode form (16-row tiles, warps split the keys; see flash_fwd.cuh) or its prefill form.
// With p.pdl (SM90) the decode form is a programmatic dependent of the stream's previous kernel
// (pdl.cuh, docs/semantics.md §7).
void launch_flash(int instance, const FlashParams& p, int grid_m, bool split_keys, void* stream);
bool flash_has_split_keys(int instance);
// Merges split partials into out/lse for `rows` = total_q capacity * num_heads rows. pdl (SM90+):
// launched as a programmatic dependent of the flash kernel before it in the stream, so that its
// launch overlaps that kernel's tail (the kernel waits for the flash kernel's results).
void launch_combine(DType dtype, const FlashParams& p, int64_t rows, bool pdl, void* stream);
// Chunked local attention's virtual batch (tiles.hpp chunk_piece): from the caller's device
// metadata, each sequence's pieces' cu_seqlens_q, seqused_k and block-table rows (the row from
// the chunk's first block on, ceil(keys / block_size) entries) into the workspace. Writes at
// most `capacity` pieces and `out_stride` entries a row, whatever the metadata says. With `pdl`
// (SM90+), a programmatic dependent that reads only the metadata before its wait.
struct ChunkBatchLaunch {
  const int32_t *cu_seqlens_q, *seqused_k, *block_table;
  int num_seqs, block_table_stride, chunk, block_size;
  int32_t *out_cu_seqlens_q, *out_seqused_k, *out_block_table;  // [capacity + 1], [capacity]
  int capacity, out_stride;
};
void launch_chunk_batch(const ChunkBatchLaunch& p, bool pdl, void* stream);
// Element kinds of the cache kernels: 0 fp16, 1 bf16, 2 fp8 e4m3, 3 fp8 e5m2, 4 fp32.
// (Plain structs: nvcc's front end rejects parts of capability.hpp, so .cu files never include
// attention.hpp; the backend translates KvWriteArgs / KvCacheView into these.)
// The K (index 0) and V (1) tensors of a paged cache: base pointers and byte strides.
struct CacheTensors {
  char* base[2];
  int64_t stride_block[2], stride_head[2], stride_token[2];  // bytes
};
struct KvWriteLaunch {
  const void* src[2];
  int64_t src_stride_token[2], src_stride_head[2];  // elements
  int head[2];
  CacheTensors dst;
  const float* scale[2];  // divide before encoding (fp8 only), nullptr = 1
  int scale_per_head;
  const int64_t* slot_mapping;
  int block_size, num_kv_heads, in_kind, out_kind, num_tensors, num_tokens;
};
// Whole pages of a paged cache's tensors (the storage plan's layout: tensor j's block b starts
// at tensors[j] + b * page_bytes): every tensor's listed pages, one kernel launch.
struct ZeroPagesLaunch {
  char* const* tensors;  // device array of num_tensors base pointers
  int64_t page_bytes;
  const int32_t* pages;  // device array of num_pages block ids
  int num_tensors, num_pages;
};
void launch_kv_write(const KvWriteLaunch& p, void* stream);
void launch_zero_pages(const ZeroPagesLaunch& p, void* stream);
// Fills n elements of `dtype` storage with N(0,1)*stddev-like uniform noise (tests, benches).
void launch_fill_random(void* data, int64_t n, int elem_bytes, int kind, uint64_t seed, float amp,
                        void* stream);

// Opt-in device checks of the arrays run() and write_kv() read (CudaFlashOptions::check_args;
// arg_checks.cu), docs/semantics.md §6's rules on them, walked in the CPU checks' order: the
// layer's and the cache's per-head values (phase 0), the batch arrays (1), PrefixLM ranges (2);
// write_kv: the scales (0), then the slots (1). report[0] is -1 when every rule holds, else the
// first violation's key, phase << 60 | sequence << 32 | rule << 28 | entry (>= 0), and report[1..3]
// the values its message names (a float value as its bits). The rules are backend_checks'
// ValueRule, BatchRule and MmRule (validate.hpp), which word them; nvcc's front end never sees
// them. Entries: a value's index, a block-table entry's column, 2 x a PrefixLM range's index in
// its sequence (+ 1 for its seqused_k rule), write_kv's token.
inline constexpr int kCheckValues = 0, kCheckBatch = 1, kCheckMm = 2;
inline constexpr int kCheckMaxSeqs = 1 << 28, kCheckMaxEntry = 1 << 28;
enum CheckRule : int {
  kCheckCuFirst,      // cu_seqlens_q[0] != 0
  kCheckCuTotal,      // cu_seqlens_q[num_seqs] != total_q
  kCheckQDecreasing,  // cu_seqlens_q decreases at the sequence
  kCheckQMax,         // q_len > max_seqlen_q
  kCheckKNegative,    // seqused_k < 0
  kCheckKMax,         // seqused_k > max_seqlen_k
  kCheckKRow,         // seqused_k > block_table_stride x block_size
  kCheckBlock,        // a used block-table entry outside [0, num_blocks)
};
enum CheckValueRule : int {
  kCheckSlope,   // an ALiBi slope not finite
  kCheckSink,    // a sink NaN or +inf
  kCheckKScale,  // a K scale not finite and > 0
  kCheckVScale,  // a V scale likewise
};
enum CheckMmRule : int {
  kCheckMmFirst,        // mm_prefix_offsets[0] != 0
  kCheckMmOffsets,      // mm_prefix_offsets decreases at the sequence
  kCheckMmOrder,        // a range empty or before the previous one's end
  kCheckMmPastSeqused,  // a range past seqused_k
  kCheckMmCount,        // mm_prefix_offsets[num_seqs] != the plan's range count (CUDA only)
};
struct ValueCheckLaunch {
  const float *slopes, *sinks;  // [num_heads] each, or null
  const float *k_scale, *v_scale;
  int num_heads, num_scales;  // num_scales: 0 (unquantized), 1 or num_kv_heads
};
struct BatchCheckLaunch {
  ValueCheckLaunch values;
  const int32_t *cu_seqlens_q, *seqused_k, *block_table;
  const int32_t *mm_offsets, *mm_ranges;  // PrefixLM ranges, or both null
  int mm_count;                           // ranges in the plan's host copy (reads stay below)
  int num_seqs, total_q, max_seqlen_q, max_seqlen_k;
  int block_table_stride, block_size, num_blocks;
  int64_t* report;  // [4], device
};
struct SlotCheckLaunch {
  ValueCheckLaunch values;  // the scales write_kv divides by
  const int64_t* slot_mapping;
  int num_tokens;
  int64_t slots;    // num_blocks x block_size
  int64_t* report;  // [4], device
};
void launch_check_batch(const BatchCheckLaunch& p, void* stream);
void launch_check_slots(const SlotCheckLaunch& p, void* stream);

// Reads `bytes` (a multiple of 16) once with 16-byte loads and folds them into `sink` (one word
// per CTA): the device's read-bandwidth ceiling, measured beside the decode rows (`streaming`
// loads, as the decode kernels'), and the benches' clean L2 eviction (normal loads, which take
// L2's lines over).
void launch_read_probe(const void* data, int64_t bytes, uint32_t* sink, int sink_words,
                       bool streaming, void* stream);

}  // namespace attnkit::cuda_flash
