// The CUDA_FLASH backend object (execution contract: include/attnkit/attention.hpp). Compiles in
// CPU-only builds too, where making it throws Unsupported.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "attnkit/attention.hpp"
#include "attnkit/kv.hpp"

namespace attnkit {

struct CudaFlashOptions {
  int force_num_splits = 0;  // > 0: use this split-KV count instead of the heuristic (tests)
  // One split count for every sequence of a decode batch, never a count per sequence (benches:
  // the ragged plan's A/B; tiles.hpp, ragged_splits).
  bool uniform_splits = false;
  // CUDA_MLA's kernel form (tests, benches): 0 by device and shape, 1 the wide form, 2 the Hopper
  // form (SM90 and plain logits only; Unsupported otherwise).
  int mla_form = 0;
  // CUDA_FLASH's kernel generation: 0 the device's newest (v3 on SM90, else v2), 2 v2's forms
  // only, 3 v3 (SM90 only; Unsupported elsewhere): prefill at heads 64 to 256 and 192/128 on wgmma
  // (flash_hopper.cuh, tiles.hpp hopper_prefill_head), v2's forms for everything else.
  int generation = 0;
  // Tests: v3's Hopper form at head 64 whatever the keys (the plan gives batches whose CTAs
  // visit fewer keys than tiles.hpp hopper_prefill_takes asks to v2's form, which generation 2
  // runs).
  bool hopper_any_length = false;
  // Benches: a batch of decodes and prefill chunks planned and launched as one part, as before
  // parts existed (cuda_flash_planned_parts; the parts' A/B).
  bool one_part = false;
  // The least a batch's decodes read (at 16 bits) to run as a part of their own
  // (cuda_flash_planned_parts); fewer ride along in the chunks' launch, where their CTAs fill the
  // chunks' last wave, while a part of their own costs a launch and a combine (4-15 us a layer on
  // the H200; a deepseek-v3 run with 1-3 decodes a step lost 3.6% of its attention time to parts,
  // session 29). Tests lower it to run parts on small batches.
  int64_t part_min_decode_bytes = int64_t(32) << 20;
  // A two-part plan's parts run concurrently: the part with the most query tokens on a stream of
  // the backend's own, forked from run()'s stream and joined back into it by events (a graph
  // captures the fork and the join). Each part's tail wave fills with the other's CTAs: 0.92-0.999x
  // the time of the parts in turn on the H200 (session 30). Benches turn it off for the A/B;
  // ATTNKIT_CUDA_CONCURRENT_PARTS=0 turns it off for every backend (serving runs' A/B).
  bool concurrent_parts = true;
  // Chunked local layers run as chunk pieces even where the decode form's kChunk kernels take the
  // chunk (decode batches at manifest.hpp kChunkDecodeHeads): the A/B of the two;
  // ATTNKIT_CUDA_CHUNK_PIECES=1 sets it for every backend.
  bool chunk_pieces = false;
  // The decode form's CTAs per SM (benches: the A/B of tiles.hpp decode_floor): 0 by the launch's
  // grid, 1 always the shared-memory floor (two per SM), 2 never (what the kernel's own shared
  // memory allows).
  int decode_occupancy = 0;
  // Where the batch says earlier_rows_settled, the decode form's first cache tile copied before
  // its wait (benches: the A/B of tiles.hpp early_copies_pay): 0 by the launch's grid, 1 always,
  // 2 never.
  int early_copies = 0;
  // Checks the device arrays that run() and write_kv() read (the ALiBi slopes, sinks and fp8
  // scales; cu_seqlens_q, seqused_k and the used block-table entries against max_seqlen_q/k and
  // the cache; PrefixLM ranges; the slot mapping) by the rules of docs/semantics.md §6 before
  // launching anything, and throws InvalidArgument worded as the CPU backends' checks: a one-CTA
  // kernel and a stream sync per call, so for debugging; refused inside a graph capture.
  // ATTNKIT_CUDA_CHECK_ARGS=1 sets it for every backend.
  bool check_args = false;
};
// CudaFlashOptions::generation for a kernel generation's name ("v2", "v3", as the selector
// resolves it); anything else ("", "auto") is 0, the device's newest.
int cuda_flash_generation(std::string_view variant);

// Throws Unsupported "CUDA_FLASH kernels are not in this build (configure with the cuda
// preset)" in a CPU-only build, and Unsupported when no SM80+ GPU is visible.
//
// plan() fixes the launch shape (kernel form, grid, split count, workspace rows); run() reads
// every length from device memory. A CUDA graph captured from run() therefore stays valid for
// later steps whose metadata (updated in place on the device) has the same num_seqs, no more
// query rows per sequence and no more total_q than the captured plan; decode-form plans (every
// sequence's q_len x group <= 16) need decode-shaped batches at replay, and a two-part plan
// (decodes, then prefill chunks, or the reverse: cuda_flash_planned_parts) needs every sequence
// to keep its kind (decode-sized or not, as there defined) at its position. A decode plan with a
// split count per sequence re-derives the counts from the replayed lengths on the device (capped at
// the captured plan's grid and workspace).
//
// PrefixLM ranges (docs/semantics.md §4) are taken at heads 128 and 256 (manifest.hpp
// kMmPrefixHeads; Unsupported elsewhere). plan() reads them from the host batch: ranges that
// widen no row (a decode step under a causal mask without window) keep the plan and kernels of a
// batch without them; otherwise the prefill form's PrefixLM kernel runs (v2's, or v3's Hopper
// form), for the whole batch (or the part whose rows they widen). run() reads the ranges from
// device memory and must get them exactly when plan() did; a graph replay must keep the captured
// plan's answer to whether they widen a row.
//
// Chunked local layers (attention_chunk_size, docs/semantics.md §4): a causal batch whose every
// sequence is decode-sized (at most 16 packed rows) at heads 128 runs the decode form's kChunk
// kernels, which take each row's chunk; other batches run as chunk pieces: plan() plans the
// kernels over the host batch's pieces, run() builds them from the device metadata in the
// workspace (one more kernel) and runs the plain kernels over them. Pieces need the chunk to be a
// multiple of the cache's block size (Unsupported otherwise; the KV plan gives such sizes). A graph
// replay of pieces must keep each sequence's piece count (a decode has one; a prefill step's rows
// must cross as many chunk boundaries as at capture); the rules above then apply to the pieces.
std::unique_ptr<AttentionBackend> make_cuda_flash_backend(const CudaFlashOptions& options = {});

// The split-KV count of the backend's last run, or of its plan before any run (1 = no split; run
// settles the plan's count with the cache's page size and dtype); 0 if `b` is not CUDA_FLASH.
int cuda_flash_planned_splits(const AttentionBackend& b);
// Keys per split of the backend's last run (or of its plan before any run) when its decode batch
// took a split count per sequence (each sequence ceil(visible keys / chunk) splits, at most the
// planned split count), 0 when every sequence took the same count or `b` is not CUDA_FLASH.
int cuda_flash_planned_split_chunk(const AttentionBackend& b);
// The kernel form of the backend's last run, or of its plan before any run (CUDA_MLA: 1 the wide
// form, 2 the Hopper form; CUDA_FLASH: 1 v3's Hopper prefill form, 2 v2's decode form, 0 v2's
// prefill forms), or -1 if `b` is neither or has no plan. Before a run, a plan reports the form a
// 16-bit cache takes (at heads 129..256 an fp8 cache takes the decode form, kV2DecodeForm).
int cuda_flash_planned_form(const AttentionBackend& b);
// How many parts the plan launches: 2 for a batch of decodes then prefill chunks, or chunks then
// decodes, each kind planned and launched on its own; else 1. Decode-sized: at most 16 packed
// query rows (CUDA_FLASH), or four of the form's row blocks (CUDA_MLA: 256 rows on the Hopper
// form, 128 on the wide one). The three functions above report the part with the most query
// tokens. 0 if `b` is neither.
int cuda_flash_planned_parts(const AttentionBackend& b);
// CTAs per SM that the shared memory of the last run's decode-form launch allowed (the part with
// the most query tokens): 2 under the floor, more at the heads whose tiles leave room on grids
// that overflow two per SM (tiles.hpp decode_floor); 0 when that run launched no decode form.
int cuda_flash_decode_ctas_per_sm(const AttentionBackend& b);
// Whether that launch copied its first cache tiles before its wait (CudaFlashOptions::
// early_copies); false when it launched no decode form or `b` is not CUDA_FLASH.
bool cuda_flash_decode_early_copies(const AttentionBackend& b);

// The KV cache manager's fresh-block zeroing hook for device caches in the storage plan's layout
// (tensor j's block b, 0 <= b < num_blocks, is the page_bytes at tensors[j] + b * page_bytes):
// one kernel launch zeroes the listed pages of every tensor, on `stream` (a cudaStream_t). Copies
// the ids to the device itself. Unsupported in a CPU-only build.
std::unique_ptr<BlockZeroer> make_cuda_page_zeroer(std::vector<void*> tensors, int64_t page_bytes,
                                                   int num_blocks, void* stream = nullptr);

}  // namespace attnkit
