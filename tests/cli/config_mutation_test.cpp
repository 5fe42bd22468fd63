// Hostile and unusual config.json files, through the CLI as a user would run it. Planning: every
// bundled config with one to three of its fields (any depth) replaced by a value of another kind
// or size (zero, negative, fractional, near and past INT_MAX, strings, null, booleans, containers)
// or removed must end within the time limit with a plan (exit 0) or a named refusal (exit 2 or 3,
// "error:" on stderr): no crash, no hang, no uncaught exception. Serving: configs whose numbers
// (head counts, sizes, windows, layer counts...) are set to other small values must run on the
// CPU and verify against CPU_REFERENCE, or be refused by name. Fixed seeds keep every run the
// same (a failure names its file, kept in the temp directory).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace {

using attnkit_cli_test::run_cli;
using nlohmann::json;

// Pointers to every value below the root (object members and array elements).
void collect(const json& v, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  if (v.is_object()) {
    for (const auto& [k, child] : v.items()) {
      out.push_back(at / k);
      collect(child, at / k, out);
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back(at / i);
      collect(v[i], at / i, out);
    }
  }
}

namespace fs = std::filesystem;

// The bundled configs, in a fixed order.
std::vector<fs::path> bundled_configs() {
  std::vector<fs::path> models;
  for (const auto& e : fs::directory_iterator(fs::path(ATTNKIT_SOURCE_DIR) / "models"))
    if (e.path().extension() == ".json") models.push_back(e.path());
  std::sort(models.begin(), models.end());
  return models;
}

TEST(ConfigMutation, EveryMutatedBundledConfigPlansOrIsRefused) {
  const std::vector<fs::path> models = bundled_configs();
  ASSERT_GE(models.size(), 10u);
  const std::vector<json> values = {0,
                                    -1,
                                    1,
                                    3,
                                    INT_MAX,
                                    int64_t(INT_MAX) + 1,
                                    int64_t(1) << 40,
                                    -int64_t(INT_MAX) - 1,
                                    0.5,
                                    1e300,
                                    "x",
                                    "",
                                    nullptr,
                                    true,
                                    false,
                                    json::array(),
                                    json::object(),
                                    json::array({1, 2})};
  const std::vector<std::string> devices = {"cpu", "cpu-amx", "a100", "h100", "b200"};
  std::mt19937 rng(27);
  auto pick = [&](size_t n) { return size_t(rng() % n); };
  constexpr int kCases = 240;
  int refused = 0;
  for (int c = 0; c < kCases; ++c) {
    const fs::path& src = models[size_t(c) % models.size()];
    std::ifstream in(src);
    json cfg = json::parse(in);
    const int edits = 1 + int(pick(3));
    for (int e = 0; e < edits; ++e) {
      std::vector<json::json_pointer> at;
      collect(cfg, json::json_pointer(), at);
      if (at.empty()) break;
      const json::json_pointer& p = at[pick(at.size())];
      const size_t choice = pick(values.size() + 1);
      if (choice == values.size() && cfg[p.parent_pointer()].is_object())
        cfg[p.parent_pointer()].erase(p.back());
      else
        cfg[p] = values[choice % values.size()];
    }
    const fs::path file =
        fs::temp_directory_path() / ("attnkit_mutated_" + std::to_string(c) + ".json");
    std::ofstream(file) << cfg.dump(1);
    const std::string device = devices[pick(devices.size())];
    const auto r = run_cli("plan --model " + file.string() + " --device " + device, 30);
    const bool ok =
        r.rc == 0 || ((r.rc == 2 || r.rc == 3) && r.err.find("error:") != std::string::npos);
    EXPECT_TRUE(ok) << "case " << c << " (" << src.filename() << " on " << device << ", " << file
                    << "): rc " << r.rc << (r.rc == 124 ? " (timed out)" : "")
                    << ", stderr: " << r.err.substr(0, 400);
    refused += r.rc != 0;
    if (ok) fs::remove(file);
  }
  // The mutations reach the checks: many configs are refused, not all.
  EXPECT_GT(refused, kCases / 5);
  EXPECT_LT(refused, kCases);
}

// Numbers (any depth) of a bundled config, for the serving case below.
void collect_numbers(const json& v, const json::json_pointer& at,
                     std::vector<json::json_pointer>& out) {
  if (v.is_number() && !v.is_boolean()) out.push_back(at);
  if (v.is_object())
    for (const auto& [k, child] : v.items()) collect_numbers(child, at / k, out);
  if (v.is_array())
    for (size_t i = 0; i < v.size(); ++i) collect_numbers(v[i], at / i, out);
}

TEST(ConfigMutation, ModelsWithOtherSmallDimensionsServeVerifiedOrAreRefused) {
  const std::vector<fs::path> models = bundled_configs();
  ASSERT_GE(models.size(), 10u);
  const std::vector<int> values = {1, 2, 3, 4, 5, 7, 8, 16, 24, 48, 64, 80, 96, 100, 128, 160, 256};
  std::mt19937 rng(2027);
  auto pick = [&](size_t n) { return size_t(rng() % n); };
  constexpr int kCases = 16;
  int served = 0;
  for (int c = 0; c < kCases; ++c) {
    const fs::path& src = models[pick(models.size())];
    std::ifstream in(src);
    json cfg = json::parse(in);
    std::vector<json::json_pointer> at;
    collect_numbers(cfg, json::json_pointer(), at);
    for (int e = 1 + int(pick(3)); e > 0 && !at.empty(); --e)
      cfg[at[pick(at.size())]] = values[pick(values.size())];
    const fs::path file =
        fs::temp_directory_path() / ("attnkit_resized_" + std::to_string(c) + ".json");
    std::ofstream(file) << cfg.dump(1);
    const auto r = run_cli("run --model " + file.string() +
                               " --device cpu --requests 2 --prompt-len 33 --decode-steps 2 "
                               "--memory 512MiB --verify --quiet",
                           120);
    const bool verified = r.rc == 0 && r.out.find("verification: OK") != std::string::npos;
    const bool refused = (r.rc == 2 || r.rc == 3) && r.err.find("error:") != std::string::npos;
    EXPECT_TRUE(verified || refused)
        << "case " << c << " (" << src.filename() << ", " << file << "): rc " << r.rc
        << ", stdout: " << r.out.substr(r.out.size() > 400 ? r.out.size() - 400 : 0)
        << ", stderr: " << r.err.substr(0, 400);
    served += verified;
    if (verified || refused) fs::remove(file);
  }
  EXPECT_GT(served, kCases / 2);  // most resized models still serve
}

}  // namespace
