// PLACEHOLDER until its owner writes it.
#include "commands.hpp"

namespace attnkit::cli {
void add_run_command(CLI::App& app, int* exit_code) {}
}  // namespace attnkit::cli
