// Runs the attnkit CLI binary as a user would (shared by the CLI tests).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace attnkit_cli_test {

struct CliResult {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A config file in the temp folder, written at construction and removed with the object (also
// when an assertion ends the test early).
struct TempConfig {
  std::filesystem::path path;
  TempConfig(const std::string& name, const std::string& text)
      : path(std::filesystem::temp_directory_path() /
             ("attnkit_cli_" + name + "_" + std::to_string(::getpid()) + ".json")) {
    std::ofstream(path) << text;
  }
  ~TempConfig() { std::filesystem::remove(path); }
  TempConfig(const TempConfig&) = delete;
  TempConfig& operator=(const TempConfig&) = delete;
};

// Runs the CLI binary with `args` (shell words), without the user's backend override; with
// timeout_s > 0 a run still going after that many seconds is stopped (rc 124).
inline CliResult run_cli(const std::string& args, int timeout_s = 0) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(::getpid());
  const auto out = dir / ("attnkit_cli_out_" + tag), err = dir / ("attnkit_cli_err_" + tag);
  const std::string limit = timeout_s > 0 ? "timeout " + std::to_string(timeout_s) + " " : "";
  const std::string cmd = limit + "env -u ATTNKIT_ATTENTION_BACKEND " + ATTNKIT_CLI_PATH + " " +
                          args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

}  // namespace attnkit_cli_test
