// attnkit: plan, explain, run and benchmark attention for a Hugging Face model config.
#include <cstdio>
#include <exception>

#include "attnkit/error.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  using namespace attnkit::cli;
  CLI::App app{"attnkit: the attention layer of an LLM inference engine"};
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_plan_commands(app, &exit_code);
  add_backends_command(app, &exit_code);
  add_run_command(app, &exit_code);
  add_bench_command(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  } catch (const attnkit::Unsupported& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitUnsupported;
  } catch (const attnkit::InvalidArgument& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitUsage;
  } catch (const attnkit::OutOfMemory& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitUnsupported;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
