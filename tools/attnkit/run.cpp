// `attnkit run`: serve a workload through the selected kernels and verify it.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "attnkit/device.hpp"
#include "attnkit/runtime.hpp"
#include "attnkit/types.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace attnkit::cli {

namespace {

// RunOptions::seed is a uint64_t, which CLI11 fills through strtoull unchecked: "-1" wrapped to
// 2^64 - 1 and values past it saturated, silently. The text is checked before that conversion
// (accepting what it accepts otherwise, hex included).
CLI::Validator seed_range() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        std::strtoull(s.c_str(), &end, 0);
        if (!s.empty() && s.find('-') == std::string::npos && errno != ERANGE &&
            end == s.c_str() + s.size())
          return {};
        return fmt::format("expected an integer from 0 to {}, got '{}'",
                           std::numeric_limits<uint64_t>::max(), s);
      },
      fmt::format("in [0 - {}]", std::numeric_limits<uint64_t>::max()));
}

}  // namespace

void add_run_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run chunked prefill + decode for every attention layer of a model through the "
      "selected backends, with random activations, and verify sampled layers");
  struct Args {
    RunOptions o;
    std::string dtype;
    std::string runner = "auto";
    std::string kv_dtype;
    std::string kv_skip;
    std::string memory;
    bool json = false;
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--model", args->o.model, "Bundled model name or path to a config.json")
      ->capture_default_str();
  cmd->add_option("--device", args->o.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--backend", args->o.backend, "Explicit backend (default: automatic)");
  cmd->add_option("--variant", args->o.variant, "Kernel generation request (v2, v3)");
  cmd->add_option("--requests", args->o.requests, "Concurrent requests")->capture_default_str();
  cmd->add_option("--prompt-len", args->o.prompt_len,
                  "Prompt tokens per request (encoder-decoder models: the encoder input)")
      ->capture_default_str();
  cmd->add_option("--decoder-prompt-len", args->o.decoder_prompt_len,
                  "Encoder-decoder models: the decoder's prompt tokens (default 1, the start "
                  "token; Whisper's start-of-transcript prompt is about 4)");
  cmd->add_option("--decode-steps", args->o.decode_steps, "Decode steps per request")
      ->capture_default_str();
  cmd->add_option("--max-tokens-per-step", args->o.max_tokens_per_step,
                  "Chunked-prefill token budget per step")
      ->capture_default_str();
  cmd->add_option("--dtype", args->dtype, kDtypeHelp);
  cmd->add_option("--runner", args->runner, kRunnerHelp)->capture_default_str();
  cmd->add_option("--kv-cache-dtype", args->kv_dtype,
                  "auto, float16, bfloat16, fp8 (fp8_e4m3), fp8_e5m2, nvfp4");
  cmd->add_option("--kv-cache-dtype-skip-layers", args->kv_skip,
                  "Layers kept at the model dtype's cache: indices and/or sliding_window, "
                  "comma-separated (a mixed-precision cache: fresh blocks are zeroed)");
  cmd->add_option("--block-size", args->o.block_size, "Pin the KV block size")
      ->check(block_size_range());
  cmd->add_option("--memory", args->memory,
                  "KV cache budget, e.g. 2GiB (default: what the "
                  "workload needs)");
  cmd->add_option("--seed", args->o.seed, "Random seed")
      ->check(seed_range())
      ->capture_default_str();
  cmd->add_flag("--verify", args->o.verify,
                "Check sampled layers against CPU_REFERENCE (long causal steps: a sample of "
                "their rows)");
  cmd->add_flag("--json", args->json, "Print the report as JSON");
  cmd->add_flag("--quiet", args->quiet, "No progress display");
  cmd->callback([args, exit_code]() {
    RunOptions o = args->o;
    if (!args->dtype.empty()) o.dtype = parse_dtype(args->dtype);
    o.runner = parse_runner(args->runner);
    if (!args->kv_dtype.empty()) o.kv_cache_dtype = parse_kv_cache_dtype(args->kv_dtype);
    o.kv_cache_dtype_skip_layers = parse_kv_skip_layers(args->kv_skip);
    if (!args->memory.empty()) o.memory_bytes = parse_memory_size(args->memory);
    const bool tty = isatty(STDERR_FILENO);
    if (!args->quiet)
      o.progress = [tty](int step, int total, int prefill, int decode) {
        if (tty)
          std::fprintf(stderr, "\r[step %d/%d] prefill %d + decode %d tokens   ", step, total,
                       prefill, decode);
        else if (step == 1 || step % 10 == 0 || step == total)
          std::fprintf(stderr, "[step %d/%d] prefill %d + decode %d tokens\n", step, total, prefill,
                       decode);
      };
    RunReport r = run_workload(o);
    if (!args->quiet && tty) std::fprintf(stderr, "\n");
    std::fputs((args->json ? run_report_to_json(r) + "\n" : format_run_report(r)).c_str(), stdout);
    *exit_code = r.ok() ? kExitOk : 1;
  });
}

}  // namespace attnkit::cli
