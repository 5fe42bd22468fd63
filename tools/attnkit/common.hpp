// Helpers shared by the CLI's subcommands: compact index ranges, capability formatting, tables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attnkit/capability.hpp"
#include "attnkit/types.hpp"

namespace attnkit::cli {

// --dtype's help, for plan/explain and run alike.
inline constexpr const char* kDtypeHelp =
    "Model dtype: float32, float16, bfloat16. Default auto: the config's, except that float32 "
    "checkpoints run in the device's first dtype (bfloat16; float16 for pooling models), "
    "vLLM's rule";
// --runner's help, for plan/explain and run alike.
inline constexpr const char* kRunnerHelp =
    "How the model is served (vLLM's --runner): generate, or pooling (embedding, classification, "
    "reward: a request ends with its prefill). Default auto: pooling for encoder-only models, "
    "Sentence Transformers folders (modules.json) and pooling architectures (*Model, "
    "*ForSequenceClassification, *RewardModel, ...), as vLLM decides";

// Sorted layer indices in their shortest form: "0-41", "0-40 step 2", "5-23 step 6", or runs
// and singles "0-4, 6-10, 12".
std::string compact_indices(std::vector<int> indices);

// "9.0", "10.0-10.3", "8.0+", "any".
std::string join_names(const std::vector<Platform>& v);
std::string join_names(const std::vector<DType>& v);
std::string join_names(const std::vector<KvCacheDType>& v, bool empty_means_any = true);
std::string join_names(const std::vector<AttentionType>& v);
std::string metadata_forms_text(const Capabilities& c);
std::string head_sizes_text(const Capabilities& c);  // incl. asymmetric pairs / any v
std::string mla_text(const Capabilities& c);         // "no", "only", "yes" (+ " sparse")
std::string generations_text(const std::vector<KernelGeneration>& gens);  // "v2 (8.0+)", ...

// Left-aligned text columns separated by two spaces (trailing spaces trimmed).
std::string format_columns(const std::vector<std::vector<std::string>>& rows);
// A GitHub-flavoured Markdown table; '|' in cells is escaped.
std::string format_markdown_table(const std::vector<std::string>& header,
                                  const std::vector<std::vector<std::string>>& rows);

}  // namespace attnkit::cli
