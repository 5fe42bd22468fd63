// attnkit: plan, explain, run and benchmark attention for a Hugging Face model config.
#include <cstdio>
#include <exception>
#include <new>

#include "attnkit/error.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  using namespace attnkit::cli;
  CLI::App app{"attnkit: the attention layer of an LLM inference engine", "attnkit"};
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  attnkit plan --model gemma-2-9b --device h100\n"
      "  attnkit explain --model deepseek-v3 --device b200 --kv-cache-dtype fp8\n"
      "  attnkit backends --markdown\n"
      "Environment: ATTNKIT_ATTENTION_BACKEND (backend when --backend is not given), "
      "ATTNKIT_MODELS_DIR (bundled model configs), ATTNKIT_CUDA_PDL=0 (no programmatic "
      "dependent launch of the CUDA decode kernels), ATTNKIT_CUDA_CONCURRENT_PARTS=0 (the two "
      "parts of a CUDA chunked-prefill step in turn, not concurrently)\n"
      "Exit codes: 0 success, 2 bad usage or input, 3 unsupported (no valid backend, invalid "
      "explicit choice, out of memory)\n");
  int exit_code = kExitOk;
  add_plan_commands(app, &exit_code);
  add_backends_command(app, &exit_code);
  add_run_command(app, &exit_code);
  add_bench_command(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help / --version print and succeed; a usage error is one line, exit code 2.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "error: %s (see 'attnkit --help' or 'attnkit <command> --help')\n",
                 e.what());
    return kExitUsage;
  } catch (const attnkit::Unsupported& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitUnsupported;
  } catch (const attnkit::InvalidArgument& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitUsage;
  } catch (const attnkit::OutOfMemory& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitUnsupported;
  } catch (const std::bad_alloc&) {
    // A host allocation past what the machine has (e.g. a config with a million heads: its
    // activation rows alone), refused like any other budget.
    std::fprintf(stderr,
                 "error: out of host memory: an allocation this model or workload needs failed "
                 "(std::bad_alloc); check the config's dimensions or ask for a smaller workload\n");
    return kExitUnsupported;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
