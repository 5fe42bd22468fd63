// `attnkit backends`: the feature matrix, generated from the catalog's declarations.
#include <fmt/format.h>

#include <iostream>
#include <string>
#include <vector>

#include "attnkit/device.hpp"
#include "attnkit/selector.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace attnkit::cli {
namespace {

const char* yes_no(bool b) { return b ? "yes" : "no"; }

const std::vector<std::string> kColumns = {"backend",
                                           "platforms",
                                           "compute capability",
                                           "dtypes",
                                           "KV cache dtypes",
                                           "head sizes",
                                           "kernel block sizes",
                                           "MLA",
                                           "sinks",
                                           "ALiBi",
                                           "softcap",
                                           "sliding window",
                                           "non-causal",
                                           "PrefixLM",
                                           "chunked local",
                                           "attention types",
                                           "metadata forms",
                                           "generations"};

std::vector<std::string> row(const BackendDecl& b) {
  const Capabilities& c = b.caps;
  // A chunk the backend reads as whole blocks: the KV plan's block sizes divide it.
  const std::string chunked =
      c.chunked_local && c.chunk_in_whole_blocks ? "whole blocks" : yes_no(c.chunked_local);
  return {b.name(),
          join_names(c.platforms),
          compute_capability_range(c),
          join_names(c.dtypes),
          join_names(c.kv_cache_dtypes),
          head_sizes_text(c),
          to_string(c.kernel_block_sizes),
          mla_text(c),
          yes_no(c.sinks),
          yes_no(c.alibi),
          yes_no(c.logits_soft_cap),
          yes_no(c.sliding_window),
          yes_no(c.non_causal),
          yes_no(c.mm_prefix),
          chunked,
          join_names(c.attn_types),
          metadata_forms_text(c),
          generations_text(b.generations)};
}

// Representative layers for the priority table: a Llama-like layer and a DeepSeek-like MLA one.
LayerSpec standard_layer() {
  LayerSpec s;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.head_size = s.head_size_v = 128;
  return s;
}
LayerSpec mla_layer() {
  LayerSpec s;
  s.num_heads = 128;
  s.num_kv_heads = 1;
  s.mla = MlaDims{512, 128, 64, 128, 1536};
  s.head_size = s.mla->decode_head_size();
  s.head_size_v = s.mla->kv_lora_rank;
  return s;
}

std::vector<std::vector<std::string>> priority_rows(const Catalog& catalog) {
  std::vector<std::vector<std::string>> rows;
  if (!catalog.priorities) return rows;
  auto list = [](const std::vector<std::string>& v) {
    if (v.empty()) return std::string("none");
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  };
  for (const auto& preset : device_preset_names()) {
    DeviceInfo d = device_from_name(preset);
    std::string dev = preset;
    if (d.platform == Platform::kCuda)
      dev += fmt::format(" (cc {}.{})", d.cc.major, d.cc.minor);
    else
      dev += fmt::format(" ({})", to_string(d.platform));
    rows.push_back({dev, list(catalog.priorities(standard_layer(), d)),
                    list(catalog.priorities(mla_layer(), d))});
  }
  return rows;
}

int run_backends(const std::string& stack, bool markdown) {
  const Catalog& catalog = catalog_for_stack(stack);
  std::vector<std::vector<std::string>> rows;
  for (const auto& b : catalog.backends) rows.push_back(row(b));
  const auto prio = priority_rows(catalog);
  if (markdown) {
    std::string out = fmt::format(
        "# Attention backends: {} stack\n\n"
        "Generated from the capability declarations by `attnkit backends --stack {} "
        "--markdown`; do not edit by hand (a test fails when this file is stale).\n\n",
        catalog.name, catalog.name);
    out += format_markdown_table(kColumns, rows);
    out += "\n## Backends\n\n";
    for (const auto& b : catalog.backends)
      out += fmt::format("- **{}**: {}\n", b.name(), b.description);
    if (!prio.empty()) {
      out +=
          "\n## Priorities\n\nCandidates in order for a standard layer (32 heads, 8 KV heads, "
          "head size 128) and an MLA layer (DeepSeek-V3 dims), per device preset. Automatic "
          "selection takes the first valid one.\n\n";
      out += format_markdown_table({"device", "standard layer", "MLA layer"}, prio);
    }
    std::cout << out;
    return kExitOk;
  }
  std::cout << fmt::format("{} stack: {} backends\n", catalog.name, catalog.backends.size());
  for (size_t i = 0; i < catalog.backends.size(); ++i) {
    const auto& b = catalog.backends[i];
    std::cout << fmt::format("\n{}: {}\n", b.name(), b.description);
    std::vector<std::vector<std::string>> block;
    for (size_t col = 1; col < kColumns.size(); ++col)
      block.push_back({"  " + kColumns[col], rows[i][col]});
    std::cout << format_columns(block);
  }
  if (!prio.empty()) {
    std::cout << "\npriorities (standard layer | MLA layer):\n";
    std::vector<std::vector<std::string>> block;
    for (const auto& r : prio) block.push_back({"  " + r[0], r[1], "|", r[2]});
    std::cout << format_columns(block);
  }
  return kExitOk;
}

}  // namespace

void add_backends_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "backends",
      "Print the feature matrix of a stack's attention backends, generated from their "
      "capability declarations (docs/backends.md is this output with --markdown)");
  auto stack = std::make_shared<std::string>("native");
  auto markdown = std::make_shared<bool>(false);
  cmd->add_option("--stack", *stack,
                  "Backend catalog: native (what attnkit executes) or vllm (vLLM's backends)")
      ->capture_default_str();
  cmd->add_flag("--markdown", *markdown, "Print a Markdown document (the docs/backends.md format)");
  cmd->callback([=] { *exit_code = run_backends(*stack, *markdown); });
}

}  // namespace attnkit::cli
