// The serving loop behind `attnkit run`: plan a model, allocate its paged KV cache, admit
// requests, run chunked prefill and decode steps for every attention layer through the selected
// backends (encoder-only models: one bidirectional pass per request), verify sampled layers
// against CPU_REFERENCE, and report per KV group.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/attention.hpp"
#include "attnkit/device.hpp"
#include "attnkit/model.hpp"
#include "attnkit/types.hpp"

namespace attnkit {

// Makes the executable backend `name` for layers like `spec` on `device`, after checking the
// same invalid_reasons the selector used (Unsupported with them otherwise, and Unsupported when
// the backend's kernels are not in this build). `variant` is the kernel generation the selector
// resolved for the layer (Selection::variant; "" for backends without generations).
std::unique_ptr<AttentionBackend> make_backend(std::string_view name, const LayerSpec& spec,
                                               const DeviceInfo& device,
                                               std::string_view variant = "");

struct RunOptions {
  std::string model = "qwen3-0.6b";
  std::string device = "auto";         // auto | cpu | cuda
  std::optional<std::string> backend;  // explicit choice (flag); env applies otherwise
  std::optional<std::string> variant;  // kernel generation request
  std::optional<DType> dtype;          // --dtype; unset: dtype auto on the run's device
  Runner runner = Runner::kAuto;       // --runner; a pooling model's requests end with prefill
  std::optional<KvCacheDType> kv_cache_dtype;
  KvSkipLayers kv_cache_dtype_skip_layers;  // layers kept at the model dtype's cache
  std::optional<int> block_size;            // pinned
  std::optional<uint64_t> memory_bytes;     // KV budget; default: what the workload needs
  int requests = 4;
  int prompt_len = 256;  // encoder-decoder models: the encoder input
  // Encoder-decoder models: the decoder's prompt (Whisper's start-of-transcript tokens); 1 unset.
  std::optional<int> decoder_prompt_len;
  int decode_steps = 16;
  int max_tokens_per_step = 512;  // chunked-prefill token budget per step
  bool verify = false;
  uint64_t seed = 1234;
  // Called after every step (progress display); may be empty.
  std::function<void(int step, int total_steps, int prefill_tokens, int decode_tokens)> progress;
};

struct GroupRunReport {
  std::string description;  // "layers 0-27: decoder, 16/8 heads, d128, kv bfloat16"
  std::string backend;
  std::string variant;
  int num_layers = 0;
  int kv_group = 0;  // -1: no cache (encoder-only models: contiguous K/V per step)
  int kernel_block_size = 0;
  int64_t query_tokens = 0;  // query rows processed per layer, summed over steps
  double seconds = 0;        // attention time (run only), all layers of the group
  double flops = 0;          // 2 * Hq * (D + Dv) per visible (query, key) pair
  double kv_bytes = 0;       // K/V bytes a kernel must read (visible keys, each once per KV head)
  // Steps whose plan ran the decodes and the prefill chunks as two parts (CUDA backends)
  int two_part_steps = 0;
  double tokens_per_second() const { return seconds > 0 ? query_tokens * num_layers / seconds : 0; }
  double gflops() const { return seconds > 0 ? flops / seconds * 1e-9 : 0; }
  double kv_gbps() const { return seconds > 0 ? kv_bytes / seconds * 1e-9 : 0; }
  int verified_layers = 0;  // layer runs checked against CPU_REFERENCE
  // Query rows those runs held, and the rows checked (all of them, or every n-th of a long
  // causal step's, its last rows included: verify_run's work bound)
  int64_t verified_rows_of = 0, verified_rows = 0;
  double max_abs_error = 0;
  double tolerance = 0;
  bool verified_ok = true;
  // Verification against the backend itself compares the paged run with the same kernel over
  // the run's own copies of the K/V rows: it checks the cache, not the kernel.
  bool oracle_is_backend() const { return backend == "CPU_REFERENCE"; }
};

struct RunReport {
  std::string model;
  DType dtype = DType::kBFloat16;  // what the model ran in (dtype auto's choice, or --dtype)
  std::string device;
  int steps = 0;
  int prefill_steps = 0;
  int64_t prefill_tokens = 0;
  int64_t decode_tokens = 0;
  int64_t encoder_tokens = 0;  // encoder-decoder models: the admitted requests' encoder inputs
  double wall_seconds = 0;
  int64_t kv_blocks_total = 0;
  int64_t kv_blocks_peak_used = 0;
  int64_t kv_blocks_zeroed = 0;
  uint64_t kv_bytes_allocated = 0;
  bool zeroing_on = false;
  std::vector<std::string> kv_notes;
  std::vector<GroupRunReport> groups;
  int state_layers = 0;   // mamba / linear-attention layers (their pages are zeroed, not run)
  bool verified = false;  // verification ran
  bool ok() const;        // every verified group within tolerance
};

// Encoder-only models run one bidirectional pass per request over contiguous K/V (no cache, no
// decode). Encoder-decoder models take the prompt as the encoder input: one encoder pass per
// request, its cross-attention K/V written once into the cross group, and the decoder from its
// prompt (decoder_prompt_len) through the decode steps. Throws InvalidArgument for bad options,
// Unsupported when no backend can serve a layer, OutOfMemory when the KV budget cannot hold one
// request.
RunReport run_workload(const RunOptions& options);

// Human-readable summary (multi-line) and JSON.
std::string format_run_report(const RunReport& report);
std::string run_report_to_json(const RunReport& report);

}  // namespace attnkit
