// `attnkit bench [--device cpu|cuda] [--suite prefill|decode|mla|encoder|all] [--quick]
// [--out FILE]`.
#include "bench.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "backends/cpu_flash/capabilities.hpp"
#include "backends/cuda_flash/manifest.hpp"
#include "commands.hpp"
#include "core/strings.hpp"

namespace attnkit::cli {

std::vector<std::pair<int, int>> parse_heads_list(const std::string& text) {
  std::vector<std::pair<int, int>> out;
  for (std::string_view item : split(text)) {
    int q = 0, kv = 0;
    const size_t slash = item.find('/');
    const bool parsed =
        slash != std::string_view::npos &&
        std::from_chars(item.data(), item.data() + slash, q).ptr == item.data() + slash &&
        std::from_chars(item.data() + slash + 1, item.data() + item.size(), kv).ptr ==
            item.data() + item.size();
    if (!parsed || q <= 0 || kv <= 0 || q % kv != 0)
      throw InvalidArgument(fmt::format(
          "bench: --decode-heads entries are QUERY/KV head counts, the query count a multiple of "
          "the KV count (e.g. 32/8, 20/20); got '{}'",
          item));
    out.push_back({q, kv});
  }
  return out;
}

std::vector<cpu_flash::Isa> parse_isa_list(const std::string& text) {
  std::string runs;
  for (cpu_flash::Isa i : cpu_flash::supported_isas())
    runs += (runs.empty() ? "" : ", ") + std::string(cpu_flash::to_string(i));
  std::vector<cpu_flash::Isa> out;
  for (std::string_view item : split(text)) {
    const auto* it =
        std::find_if(std::begin(cpu_flash::kIsas), std::end(cpu_flash::kIsas),
                     [&](cpu_flash::Isa i) { return cpu_flash::to_string(i) == item; });
    if (it == std::end(cpu_flash::kIsas) || !cpu_flash::isa_supported(*it))
      throw InvalidArgument(fmt::format(
          "bench: --interleave-isa takes CPU_FLASH variants this CPU runs ({}); got '{}'", runs,
          item));
    if (std::find(out.begin(), out.end(), *it) == out.end()) out.push_back(*it);
  }
  if (out.empty())
    throw InvalidArgument(
        fmt::format("bench: --interleave-isa needs at least one variant ({})", runs));
  return out;
}

std::vector<std::pair<int, int>> parse_head_sizes(const std::string& text, std::string_view flag) {
  std::vector<std::string> built;
  for (auto [qk, v] : cuda_flash::kFlashHeadPairs)
    built.push_back(qk == v ? std::to_string(qk) : fmt::format("{}/{}", qk, v));
  auto number = [](std::string_view t, int& d) {
    return !t.empty() &&
           std::from_chars(t.data(), t.data() + t.size(), d).ptr == t.data() + t.size();
  };
  std::vector<std::pair<int, int>> out;
  for (std::string_view item : split(text)) {
    const size_t slash = item.find('/');
    int qk = 0, v = 0;
    const bool parsed = slash == std::string_view::npos ? number(item, qk) && number(item, v)
                                                        : number(item.substr(0, slash), qk) &&
                                                              number(item.substr(slash + 1), v);
    if (!parsed || std::find(cuda_flash::kFlashHeadPairs.begin(), cuda_flash::kFlashHeadPairs.end(),
                             std::pair{qk, v}) == cuda_flash::kFlashHeadPairs.end())
      throw InvalidArgument(
          fmt::format("bench: {} takes head sizes (qk/v pairs) CUDA_FLASH builds ({}); got '{}'",
                      flag, fmt::join(built, ", "), item));
    out.emplace_back(qk, v);
  }
  return out;
}

std::vector<DecodeBatch> parse_decode_grid(const std::string& text) {
  std::vector<DecodeBatch> out;
  for (std::string_view item : split(text)) {
    DecodeBatch d{std::string(item), {}};
    for (std::string_view part : split(item, '+')) {
      int b = 0, ctx = 0;
      char tail = 0;
      if (std::sscanf(std::string(part).c_str(), "%dx%d%c", &b, &ctx, &tail) != 2 || b <= 0 ||
          ctx <= 0 || d.lens.size() + size_t(b) > 65535)
        throw InvalidArgument(
            fmt::format("bench --decode-grid: '{}' is not BATCHxCONTEXT with positive numbers "
                        "(e.g. 1x32768), or such parts joined by '+' (1x65536+63x1024)",
                        part));
      d.lens.insert(d.lens.end(), size_t(b), ctx);
    }
    out.push_back(std::move(d));
  }
  return out;
}

bool custom_decode_rows(const BenchOptions& o) {
  const BenchOptions d;
  return !o.decode_grid.empty() || o.decode_heads != d.decode_heads ||
         o.decode_head != d.decode_head || o.decode_q != d.decode_q;
}

void add_bench_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "bench",
      "Benchmark the attention kernels: one JSON object per line, each figure beside the "
      "device ceilings (GEMM rate, memory read bandwidth) measured in the same run");
  auto opts = std::make_shared<BenchOptions>();
  cmd->add_option("--device", opts->device, "cpu or cuda")
      ->transform(CLI::IsMember({"cpu", "cuda"}, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--suite", opts->suite,
                  "prefill, decode, mla (MLA decode: CUDA_MLA, or CPU_FLASH on the cpu), "
                  "encoder (cuda: encoder-only "
                  "layers over contiguous K/V), mixed (cuda: chunked-prefill steps, decodes and "
                  "a prefill chunk in one batch, CUDA_FLASH and CUDA_MLA) or all")
      ->transform(
          CLI::IsMember({"prefill", "decode", "mla", "encoder", "mixed", "all"}, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_flag("--quick", opts->quick, "a small grid (smoke runs, CI)");
  cmd->add_option("--out", opts->out_path, "also write the rows to this file (JSON lines)");
  cmd->add_option("--splits", opts->splits,
                  "cuda: force this split-KV count instead of the plan's heuristic (sweeps; 0, "
                  "the default: the plan's own, so a sweep can include it)")
      ->check(CLI::Range(0, 128));
  cmd->add_flag("--uniform-splits", opts->uniform_splits,
                "cuda: one split-KV count for every sequence of a decode batch, never a count "
                "per sequence (the ragged plan's A/B)");
  cmd->add_option("--decode-grid", opts->decode_grid,
                  "decode and MLA shapes as batch x context, e.g. 1x32768,16x8192; '+' joins a "
                  "ragged batch's parts, e.g. 1x65536+63x1024 (cpu: replaces its own decode "
                  "rows, as the other --decode options do, each shape over bf16 and fp8 caches, "
                  "and its MLA grid)");
  cmd->add_option("--decode-q", opts->decode_q,
                  "query tokens per sequence of the decode rows (speculative decoding "
                  "verifies 1 + k tokens a step)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--decode-head", opts->decode_head, "head size of the decode rows")
      ->capture_default_str();
  cmd->add_option("--prefill-heads", opts->prefill_heads,
                  "cuda: head sizes of the prefill rows, comma-separated, qk/v for an asymmetric "
                  "pair (192/128: MLA's prefill); 2048 / qk query heads each")
      ->capture_default_str();
  cmd->add_option("--decode-heads", opts->decode_heads,
                  "the decode rows' query / KV head counts, comma-separated (MHA: "
                  "32/32; Whisper: 20/20)")
      ->capture_default_str();
  cmd->add_option("--decode-chunk", opts->decode_chunk,
                  "cuda: the decode rows' layers are chunked local attention of N tokens "
                  "(Llama 4's attention_chunk_size; each row reads its chunk's keys only; 0: "
                  "none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option(
         "--mla-form", opts->mla_form,
         "cuda: CUDA_MLA's kernel form for the MLA rows (auto: the plan's pick, hopper on SM90)")
      ->transform(CLI::IsMember({"auto", "wide", "hopper"}, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--variant", opts->variant,
                  "cuda: CUDA_FLASH's kernel generation for the prefill and decode rows (auto: "
                  "the device's newest, v3 on SM90)")
      ->transform(CLI::IsMember({"auto", "v2", "v3"}, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_flag("--hopper-any-length", opts->hopper_any_length,
                "cuda: v3's Hopper prefill form at head 64 whatever the keys (the plan's "
                "length threshold's A/B)");
  cmd->add_option("--decode-occupancy", opts->decode_occupancy,
                  "cuda: the decode form's CTAs per SM (auto: by the launch's grid; floor: two "
                  "per SM; own: as many as its shared memory allows)")
      ->transform(CLI::IsMember({"auto", "floor", "own"}, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--early-copies", opts->early_copies,
                  "cuda: whether the decode form copies its first cache tile before the previous "
                  "kernel has finished (the calls say AttentionBatch::earlier_rows_settled, as a "
                  "serving step does; auto: by the launch's grid)")
      ->transform(CLI::IsMember({"auto", "always", "never"}, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--prefill-kv", opts->prefill_kv,
                  "cuda: the KV cache dtype of the prefill rows (the decode grid runs both)")
      ->transform(CLI::IsMember({"bfloat16", "fp8_e4m3"}, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--prefill-window", opts->prefill_window,
                  "cuda: the prefill rows' sliding window of N tokens (causal rows see the N "
                  "keys up to their own, non-causal rows N - 1 on either side; 0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--prefill-image", opts->prefill_image,
                  "cuda: the prefill rows' sequences open with an image of N tokens that attend to "
                  "each other both ways (PrefixLM ranges [0, N); 0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--sequential-blocks", opts->sequential_blocks,
                "each sequence's KV blocks one after another in the cache (by default the "
                "block tables take them in a shuffled order)");
  cmd->add_option("--seed", opts->seed,
                  "the first row's seed for its shuffled block table (cuda: and its random "
                  "inputs), each row taking the next (default: cuda 100, cpu 1), so that a "
                  "figure can be checked over other layouts of the same shape");
  cmd->add_option("--pool", opts->pool,
                  "cuda: the paged cache holds this many times the blocks a row's batch reads "
                  "(its block tables take theirs from the pool; K, V and the layer loop's "
                  "layers lie a pool apart), as a serving cache holds more than one step reads")
      ->check(CLI::Range(1.0, 16.0))
      ->capture_default_str();
  cmd->add_option("--interleave-isa", opts->interleave_isa,
                  "cpu: also time every row on these CPU_FLASH variants (comma-separated, e.g. "
                  "amx_bf16,avx512_bf16) in turn, a few calls each over 12 rounds in this one "
                  "process, so that machine drift hits them alike; rows gain interleaved_isa");
  cmd->callback([opts, exit_code] {
    if (opts->device != "cuda" &&
        (opts->splits > 0 || opts->uniform_splits || opts->decode_chunk > 0 ||
         opts->mla_form != "auto" || opts->variant != "auto" || opts->decode_occupancy != "auto" ||
         opts->early_copies != "auto" || opts->prefill_kv != "bfloat16" ||
         opts->prefill_image > 0 || opts->hopper_any_length || opts->prefill_window > 0 ||
         opts->prefill_heads != BenchOptions{}.prefill_heads || opts->pool != 1))
      throw InvalidArgument(
          "bench: --splits, --uniform-splits, --decode-chunk, --mla-form, --decode-occupancy, "
          "--early-copies, --variant, --hopper-any-length, --prefill-window, --prefill-kv, "
          "--prefill-image, --prefill-heads and --pool apply to --device cuda only (the CPU "
          "suite has its own grid)");
    if (opts->device == "cuda" && !opts->interleave_isa.empty())
      throw InvalidArgument("bench: --interleave-isa applies to --device cpu only");
    if (!opts->interleave_isa.empty()) parse_isa_list(opts->interleave_isa);
    // Refused here, before any device work.
    parse_heads_list(opts->decode_heads);
    if (!opts->decode_grid.empty()) parse_decode_grid(opts->decode_grid);
    if (opts->device == "cuda") {
      parse_head_sizes(std::to_string(opts->decode_head), "--decode-head");  // a square head
    } else if (const HeadSizeRule& rule = cpu_flash_capabilities().head_sizes;
               !rule.accepts(opts->decode_head)) {
      throw InvalidArgument(
          fmt::format("bench: --decode-head on the cpu takes the head sizes CPU_FLASH runs ({}); "
                      "got {}",
                      rule.describe(), opts->decode_head));
    }
    if (opts->device != "cuda" && custom_decode_rows(*opts) && opts->suite == "prefill")
      throw InvalidArgument(
          "bench: --decode-grid, --decode-heads, --decode-head and --decode-q shape the decode "
          "rows; --suite prefill runs none");
    if (const BenchOptions d; opts->suite == "mla" &&
                              (opts->decode_heads != d.decode_heads ||
                               opts->decode_head != d.decode_head || opts->decode_q != d.decode_q))
      throw InvalidArgument(
          "bench: --decode-heads, --decode-head and --decode-q shape the decode rows; the MLA "
          "rows are DeepSeek-V3's (128 and 16 heads of 576/512, one query token; --decode-grid "
          "sets their batches)");
    parse_head_sizes(opts->prefill_heads, "--prefill-heads");
    if (opts->prefill_window > 0 && opts->prefill_image > 0)
      throw InvalidArgument(
          "bench: --prefill-window and --prefill-image do not combine (one mask change a run)");
    if (opts->device != "cuda" && (opts->suite == "encoder" || opts->suite == "mixed"))
      throw InvalidArgument(
          fmt::format("bench: --suite {} benchmarks CUDA kernels and applies to --device cuda only",
                      opts->suite));
    *exit_code = opts->device == "cuda" ? run_cuda_bench(*opts) : run_cpu_bench(*opts);
  });
}

}  // namespace attnkit::cli
