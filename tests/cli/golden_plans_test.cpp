// Golden plans: every bundled model on the devices users ask about, through both stacks. One line
// per layer group (backend, kernel variant, MLA prefill backend, kernel block size) or the
// refusal. Regenerate after an intended change with ATTNKIT_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "cli_run.hpp"

namespace {

using attnkit_cli_test::run_cli;
using attnkit_cli_test::slurp;

const char* kModels[] = {"deepseek-v3",
                         "gemma-2-9b",
                         "gemma-3-1b-it",
                         "gemma-4-26b-a4b",
                         "glm-4.7-flash",
                         "gpt-oss-20b",
                         "llama-3.1-8b",
                         "llama-3.1-8b-instruct",
                         "llama-3.2-1b",
                         "llama-4-scout-17b-16e-instruct",
                         "mixtral-8x7b",
                         "modernbert-base",
                         "nemotron-3-nano-30b-a3b",
                         "paligemma-3b-pt-224",
                         "phi-3.5-mini-instruct",
                         "qwen3-0.6b",
                         "qwen3-8b",
                         "snowflake-arctic-embed-m",
                         "t5-small"};
// CPU presets, not `cpu`: that one is this machine's CPU, and its features (AMX) change plans.
const char* kDevices[] = {"h100", "b200", "rtx5090", "a100", "mi300x", "cpu-amx", "cpu-avx512"};

std::string detail(const nlohmann::json& g, const std::string& label) {
  if (!g.contains("details")) return "";
  for (const auto& d : g["details"])
    if (d["label"] == label) return d["value"].get<std::string>();
  return "";
}

std::string summarize(const std::string& stack, const std::string& model,
                      const std::string& device) {
  const auto r =
      run_cli("plan --json --stack " + stack + " --model " + model + " --device " + device);
  std::string line = stack + " " + model + " " + device + ":";
  if (r.rc != 0) {
    // The error line, not the reader's warnings before it.
    const size_t at = r.err.find("error:");
    std::string err = r.err.substr(at == std::string::npos ? 0 : at);
    err = err.substr(0, err.find(" Reasons:"));
    err = err.substr(0, err.find('\n'));
    // The device's own name (e.g. this CPU's model) is not part of the plan.
    err =
        std::regex_replace(err, std::regex(R"(for (\w+) \(.*?\) with layer)"), "for $1 with layer");
    return line + " exit " + std::to_string(r.rc) + " " + err;
  }
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& g : j["groups"]) {
    line += " [" + g["layer_ranges"].get<std::string>() + " " + g["backend"].get<std::string>();
    if (!g["variant"].get<std::string>().empty()) line += " " + g["variant"].get<std::string>();
    if (const auto p = detail(g, "MLA prefill backend"); !p.empty())
      line += " prefill=" + p.substr(0, p.find(' '));
    line += "]";
  }
  if (j["kv"].contains("groups"))
    for (const auto& kg : j["kv"]["groups"])
      line += " kv" + std::to_string(kg["group_id"].get<int>()) + "=" +
              std::to_string(kg["kernel_block_size"].get<int>());
  return line;
}

TEST(GoldenPlans, BundledModelsOnEveryDeviceAndStack) {
  std::string text;
  for (const char* stack : {"native", "vllm"})
    for (const char* model : kModels)
      for (const char* device : kDevices) text += summarize(stack, model, device) + "\n";
  const std::string path = std::string(ATTNKIT_SOURCE_DIR) + "/tests/cli/golden/plans.txt";
  if (std::getenv("ATTNKIT_UPDATE_GOLDEN")) {
    std::ofstream(path) << text;
    GTEST_SKIP() << "golden file rewritten: " << path;
  }
  const std::string golden = slurp(path);
  ASSERT_FALSE(golden.empty()) << "missing " << path << " (run with ATTNKIT_UPDATE_GOLDEN=1)";
  std::istringstream want(golden), got(text);
  std::string w, g;
  int line = 0;
  for (;;) {
    w.clear();
    g.clear();
    const bool more_want = bool(std::getline(want, w)), more_got = bool(std::getline(got, g));
    if (!more_want && !more_got) break;
    EXPECT_EQ(g, w) << "line " << ++line;
  }
}

}  // namespace
