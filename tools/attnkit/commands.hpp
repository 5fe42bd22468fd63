// The CLI's subcommands, one file each. Every command returns the process exit code:
// 0 success, 2 bad usage or input, 3 unsupported (no valid backend, invalid explicit choice).
#pragma once

#include <CLI/CLI.hpp>

namespace attnkit::cli {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitUnsupported = 3;

// --block-size of plan, explain and run (tokens per KV block), checked alike by all three. The
// upper bound only catches typos: no kernel takes blocks near it.
constexpr int kMaxBlockSize = 1 << 20;
inline CLI::Validator block_size_range() { return CLI::Range(1, kMaxBlockSize); }

// Each adds its subcommand(s) to `app`; the callback stores its exit code in `*exit_code`.
void add_plan_commands(CLI::App& app, int* exit_code);     // plan, explain (plan.cpp)
void add_backends_command(CLI::App& app, int* exit_code);  // backends (backends.cpp)
void add_run_command(CLI::App& app, int* exit_code);       // run (run.cpp)
void add_bench_command(CLI::App& app, int* exit_code);     // bench (bench.cpp)

}  // namespace attnkit::cli
