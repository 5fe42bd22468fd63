// Argument checks of docs/semantics.md §6 on host pointers, shared by the CPU backends so that
// CPU_FLASH and CPU_REFERENCE accept and reject the same inputs. Each throws InvalidArgument
// "<backend>: <rule> (got <value>...)" before anything is written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "attnkit/attention.hpp"

namespace attnkit::backend_checks {

// Head counts and sizes positive, num_heads % num_kv_heads == 0, scale finite, softcap finite
// and >= 0, windows >= -1, chunk size >= 0; ALiBi slopes finite, sinks finite or -inf (both
// read on the host: the CPU backends' arrays).
void check_layer(std::string_view backend, const AttentionLayerParams& layer);

// What run() needs: the layer, the cache view (its agreement with the layer, fp8/nvfp4 scales
// finite and > 0), the batch metadata against the cache (cu_seqlens_q, seqused_k,
// max_seqlen_q/k, used block-table entries) and the q/out pointers.
void check_attention_args(std::string_view backend, const AttentionArgs& args);

// The batch-metadata rules check_attention_args walks, in its order (per sequence: the query
// count, seqused_k, the block-table row, then its used entries). The CUDA backends' device checks
// (CudaFlashOptions::check_args) report the same rules and word them with batch_rule_message.
enum class BatchRule { kCuFirst, kCuTotal, kQDecreasing, kQMax, kKNegative, kKMax, kKRow, kBlock };
// The message of `rule` broken at sequence `seq` (kBlock: at block-table column `entry`) by
// `value` (the entry, count or length that breaks it), for a cache of `num_blocks` blocks of
// `block_size` slots.
std::string batch_rule_message(BatchRule rule, const AttentionBatch& batch, int block_size,
                               int num_blocks, int seq, int64_t entry, int64_t value);
// write_kv's slot rule: slot_mapping[token] = slot outside [-1, slots).
std::string slot_rule_message(int64_t token, int64_t slot, int64_t slots);

// PrefixLM ranges of a host batch (docs/semantics.md §4): both arrays or neither, offsets
// non-decreasing from 0, each range non-empty, sorted, disjoint and within [0, seqused_k).
// check_attention_args runs it too, after the batch rules.
void check_mm_prefix_ranges(std::string_view backend, const AttentionBatch& host_batch);
// Its rules, in its order (then per sequence), worded by mm_rule_message from the values that
// break them: kFirst mm_prefix_offsets[0] (a); kOffsets a sequence's offsets (a then b);
// kOrder and kPastSeqused a range [a, b) and the previous range's end or seqused_k (c).
enum class MmRule { kFirst, kOffsets, kOrder, kPastSeqused };
std::string mm_rule_message(MmRule rule, int seq, int64_t a, int64_t b, int64_t c);

// Per-head values the layer and the cache carry, in the order the checks above walk them (the
// layer's, then the cache's): ALiBi slopes finite, sinks finite or -inf, fp8/nvfp4 scales finite
// and > 0. value_rule_message words element `index` of one that breaks its rule.
enum class ValueRule { kSlope, kSink, kKScale, kVScale };
std::string value_rule_message(ValueRule rule, int index, float value);
// The scales the values rule covers in a cache view: k_scale and v_scale (each may be null) of a
// quantized cache (fp8, nvfp4), `count` each (num_kv_heads per head, else 1); none otherwise.
struct CheckedScales {
  const float *k = nullptr, *v = nullptr;
  int count = 0;
};
CheckedScales checked_scales(const KvCacheView& kv);

// What write_kv() needs: the cache view, k and slot_mapping, v exactly when the cache has a V
// tensor (an MLA latent cache has none), slots in [-1, num_blocks * block_size).
void check_write_args(std::string_view backend, const KvWriteArgs& args);

}  // namespace attnkit::backend_checks
