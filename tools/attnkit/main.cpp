// attnkit: plan, explain, run and benchmark attention for a Hugging Face model config.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "attnkit/error.hpp"
#include "commands.hpp"

namespace {

// "007" -> "7", "-010" -> "-10", "000" -> "0"; anything but a sign and decimal digits (hex such
// as "0x10", words, sizes) unchanged.
std::string strip_leading_zeros(std::string v) {
  const size_t d = v.empty() || (v[0] != '-' && v[0] != '+') ? 0 : 1;
  if (v.size() - d < 2 || v[d] != '0' ||
      !std::all_of(v.begin() + long(d), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return v;
  const size_t first = std::min(v.find_first_not_of('0', d), v.size() - 1);
  return v.substr(0, d) + v.substr(first);
}

// The command line for CLI11, whose integer conversion (strtoll, base 0) read "010" as 8 and
// refused "08": the values of the chosen subcommand's integer options (type names INT and UINT),
// as "--opt value" or "--opt=value", are decimal with leading zeros stripped. In CLI11's order
// for App::parse(std::vector<std::string>&): reversed, without the program name.
std::vector<std::string> decimal_integer_args(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::set<std::string> int_names;
  if (!args.empty())
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == args[0])
        for (const CLI::Option* opt : sub->get_options()) {
          const std::string type = opt->get_type_name();
          if (type.rfind("INT", 0) != 0 && type.rfind("UINT", 0) != 0) continue;
          for (const auto& n : opt->get_lnames()) int_names.insert("--" + n);
          for (const auto& n : opt->get_snames()) int_names.insert("-" + n);
        }
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& a = args[i];
    if (const size_t eq = a.find('='); eq != std::string::npos && int_names.count(a.substr(0, eq)))
      a = a.substr(0, eq + 1) + strip_leading_zeros(a.substr(eq + 1));
    else if (int_names.count(a) && i + 1 < args.size())
      args[i + 1] = strip_leading_zeros(args[i + 1]), ++i;
  }
  std::reverse(args.begin(), args.end());
  return args;
}

}  // namespace

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
    std::vector<std::string> args = decimal_integer_args(app, argc, argv);
    app.parse(args);
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
