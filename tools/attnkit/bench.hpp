// `attnkit bench`: benchmark programs that print one JSON object per line (rows), each figure
// beside the ceilings measured in the same run.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/cpu_flash/cpu_flash_backend.hpp"

namespace attnkit::cli {

struct BenchOptions {
  std::string device = "cpu";           // cpu | cuda
  std::string suite = "all";            // prefill | decode | mla | encoder | mixed | all
  bool quick = false;                   // a small grid (smoke runs, CI)
  std::optional<std::string> out_path;  // also write the rows to this file
  int splits = 0;                       // cuda: > 0 forces this split-KV count (sweeps)
  bool uniform_splits = false;          // cuda: one split count for every decode sequence
  std::string decode_grid;              // "BxCTX,..." replaces the decode (cuda: and MLA) grids
  int decode_head = 128;                // head size of the decode rows
  std::string prefill_heads = "64,128,256";  // cuda: head sizes (or qk/v pairs) of the prefill rows
  // the decode rows' query / KV head counts ("32/8,32/4"; parse_heads_list)
  std::string decode_heads = "32/8,32/4";
  int decode_q = 1;      // query tokens per sequence of the decode rows
  int decode_chunk = 0;  // cuda: the decode rows' attention_chunk_size (chunked local; 0: none)
  std::string mla_form = "auto";          // cuda: CUDA_MLA's kernel form, auto | wide | hopper
  std::string variant = "auto";           // cuda: CUDA_FLASH's generation, auto | v2 | v3
  bool hopper_any_length = false;         // cuda: v3's Hopper form at head 64 whatever the keys
  std::string decode_occupancy = "auto";  // cuda: the decode form's CTAs per SM, auto | floor | own
  std::string early_copies = "auto";      // cuda: the decode's early copies, auto | always | never
  int prefill_window = 0;                 // cuda: the prefill rows' sliding window (0: none)
  std::string prefill_kv = "bfloat16";    // cuda: the prefill rows' cache, bfloat16 | fp8_e4m3
  int prefill_image = 0;  // cuda: each prefill sequence's first N keys are one PrefixLM range
  bool sequential_blocks = false;  // block tables in allocation order, not shuffled
  // the first row's seed of its block order (cuda: and random inputs); each row takes the next.
  // Unset: the device bench's own, so that rows stay comparable with earlier runs.
  std::optional<uint32_t> seed;
  double pool = 1;             // cuda: the cache's blocks, as a multiple of those the batch reads
  std::string interleave_isa;  // cpu: CPU_FLASH variants timed in turn per row (parse_isa_list)
};

// "amx_bf16,avx512_bf16" -> those variants; InvalidArgument names one that is not a CPU_FLASH
// variant, or one this CPU does not run, with the ones it does.
std::vector<cpu_flash::Isa> parse_isa_list(const std::string& text);

// "32/8,32/32" -> {{32, 8}, {32, 32}}; InvalidArgument names an entry that is not Q/KV with
// positive counts, Q a multiple of KV.
std::vector<std::pair<int, int>> parse_heads_list(const std::string& text);
// "64,160,192/128" -> {{64, 64}, {160, 160}, {192, 128}} (qk / v); InvalidArgument names an
// entry that is not a pair CUDA_FLASH builds.
std::vector<std::pair<int, int>> parse_head_sizes(const std::string& text, std::string_view flag);
// The CPU bench's decode rows follow --decode-grid / --decode-heads / --decode-head / --decode-q
// (instead of its own grid) when any of them is given.
bool custom_decode_rows(const BenchOptions& o);

// One decode batch of the grid: "16x8192" (16 sequences of 8192 keys), or a ragged one whose
// parts follow each other, "1x65536+63x1024" (one sequence of 64k keys, then 63 of 1k).
struct DecodeBatch {
  std::string text;
  std::vector<int> lens;
  bool ragged() const {
    return std::adjacent_find(lens.begin(), lens.end(), std::not_equal_to<>()) != lens.end();
  }
  int longest() const { return *std::max_element(lens.begin(), lens.end()); }
};
// "1x32768,1x65536+63x1024" -> its batches; InvalidArgument names a part that is not BxCTX.
std::vector<DecodeBatch> parse_decode_grid(const std::string& text);

int run_cpu_bench(const BenchOptions& options);   // bench_cpu.cpp
int run_cuda_bench(const BenchOptions& options);  // bench_cuda.cpp (explains itself without CUDA)

}  // namespace attnkit::cli
