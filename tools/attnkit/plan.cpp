// `attnkit plan` / `attnkit explain`: the attention plan of a model on a device. Layers are
// grouped by LayerSpec::signature(); each group shows its shape, features, the selected backend
// and kernel variant, the warnings, and (explain / --verbose) every backend with its reasons.
#include <fmt/format.h>

#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attnkit/device.hpp"
#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/log.hpp"
#include "attnkit/model.hpp"
#include "attnkit/selector.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace attnkit::cli {
namespace {

using json = nlohmann::ordered_json;

struct PlanArgs {
  std::string model;
  std::string device = "auto";
  std::string stack = "native";
  std::string dtype;  // "" = the config's torch_dtype
  std::string runner = "auto";
  std::string kv_cache_dtype;  // "" = the checkpoint's KV scheme, else auto
  std::string kv_skip;         // --kv-cache-dtype-skip-layers
  int block_size = 0;          // 0 = not pinned
  std::string backend;         // "" = ATTNKIT_ATTENTION_BACKEND, else auto
  std::string variant;
  std::string memory;  // KV budget; "" = the device's memory
  int max_tokens_per_step = KvPlanOptions{}.max_tokens_per_step;
  bool json = false;
  bool verbose = false;
};

// One group of layers with the same signature, and what the selector made of it.
struct GroupPlan {
  LayerSpec spec;  // the group's first layer
  std::vector<int> layers;
  std::vector<int> kv_shared_layers;  // members that reuse another layer's KV
  std::optional<Selection> selection;
  std::string error;           // selection failed (Unsupported): its message
  std::vector<Rejection> all;  // every backend with its reasons (verbose)
  std::vector<std::pair<std::string, std::string>> details;  // the catalog's plan_details
};

// What a KV budget too small for the plan leaves out, beside "N blocks, M tokens".
struct BudgetCheck {
  std::string error;    // not one token of one request fits (run refuses such a budget too)
  std::string warning;  // a short request fits, but no token of a max_model_len sequence does
};

struct Plan {
  ModelSpec model;
  DeviceInfo device;
  const Catalog* catalog = nullptr;
  SelectOptions options;
  std::vector<GroupPlan> groups;
  std::optional<KvPlan> kv;
  std::string kv_error;          // KV planning failed (e.g. no common block size): its message
  BudgetCheck kv_budget;         // planned, but the budget is too small (error or warning)
  std::vector<std::string> log;  // what the selector logged (selection lines, warnings)
};

// The KV plan over every group's selected backend (groups without one are unconstrained), for
// --memory or the device's whole memory (weights and activations are not subtracted).
void plan_kv(Plan& p, const PlanArgs& a, const std::map<std::string, size_t>& by_signature) {
  std::vector<std::vector<const Capabilities*>> caps;
  for (const LayerSpec& l : p.model.attention_layers) {
    const GroupPlan& g = p.groups[by_signature.at(l.signature())];
    caps.push_back({});
    if (g.selection) caps.back().push_back(&p.catalog->find(g.selection->backend)->caps);
  }
  KvPlanOptions o;
  if (a.block_size > 0) o.block_size = a.block_size;
  o.max_tokens_per_step = a.max_tokens_per_step;
  if (!a.memory.empty())
    o.memory_bytes = parse_memory_size(a.memory);
  else if (p.device.memory_bytes)
    o.memory_bytes = p.device.memory_bytes;
  p.kv = plan_kv_cache(p.model, caps, o);
}

BudgetCheck check_kv_budget(const KvPlan& kv, const PlanArgs& a) {
  BudgetCheck c;
  if (!kv.memory_bytes || kv.groups.empty() || kv.bytes_per_block <= 0 || kv.max_tokens > 0)
    return c;
  const std::string budget =
      fmt::format("KV budget of {} bytes ({}) holds {} blocks of {} bytes", *kv.memory_bytes,
                  a.memory.empty() ? "the device's memory" : "--memory " + a.memory, kv.num_blocks,
                  kv.bytes_per_block);
  auto bytes_for = [&](int64_t blocks) {
    return uint64_t(kv.scale_bytes) + uint64_t(blocks) * uint64_t(kv.bytes_per_block);
  };
  // The rule run applies to its workload (KvPlan::peak_blocks plus the null block), for one token.
  const int64_t first = kv.peak_blocks(1, 1) + 1;
  if (kv.num_blocks < first) {
    c.error = fmt::format(
        "{}; one request of one token needs {} (the null block included): expected at least {} "
        "bytes",
        budget, first, bytes_for(first));
    return c;
  }
  const int64_t need = kv.min_blocks_for_max_len();
  c.warning = fmt::format(
      "{}: short requests fit, but no token of a sequence of max_model_len {} after its fixed "
      "window / state / encoder blocks; that needs {} blocks ({} bytes)",
      budget, kv.max_model_len, need, bytes_for(need));
  return c;
}

ModelLoadOptions load_options(const PlanArgs& a) {
  ModelLoadOptions o;
  if (!a.dtype.empty()) o.dtype = parse_dtype(a.dtype);
  o.runner = parse_runner(a.runner);
  if (!a.kv_cache_dtype.empty()) o.kv_cache_dtype = parse_kv_cache_dtype(a.kv_cache_dtype);
  o.kv_cache_dtype_skip_layers = parse_kv_skip_layers(a.kv_skip);
  if (a.block_size > 0) o.block_size = a.block_size;
  return o;
}

// Builds the plan. Selection failures are kept per group when `keep_going` (explain shows every
// group and its reasons); otherwise the first one is thrown.
Plan build_plan(const PlanArgs& a, bool keep_going) {
  Plan p;
  p.device = device_from_name(a.device);
  p.catalog = &catalog_for_stack(a.stack);
  ModelLoadOptions load = load_options(a);
  load.dtype_rule = [&p](const ModelDtypeQuery& q) {
    return resolve_model_dtype(*p.catalog, p.device, q);
  };
  // vLLM aligns such caches with _align_heterogeneous_kv_block_size, which the vllm catalog's KV
  // plan does not model: say so rather than print another engine's numbers.
  if (p.catalog->name != "native" && !load.kv_cache_dtype_skip_layers.empty())
    throw Unsupported(fmt::format(
        "--kv-cache-dtype-skip-layers with --stack {}: that engine's alignment of mixed-precision "
        "caches is not modelled; plan it with --stack native",
        p.catalog->name));
  p.model = load_model(a.model, load);
  p.options.backend = resolve_requested_backend(
      a.backend.empty() ? std::nullopt : std::optional<std::string>(a.backend));
  if (!a.variant.empty()) p.options.variant = a.variant;

  std::map<std::string, size_t> by_signature;
  for (const LayerSpec& l : p.model.attention_layers) {
    auto [it, fresh] = by_signature.emplace(l.signature(), p.groups.size());
    if (fresh) {
      p.groups.emplace_back();
      p.groups.back().spec = l;
    }
    GroupPlan& g = p.groups[it->second];
    g.layers.push_back(l.layer_index);
    if (l.kv_sharing_target_layer) g.kv_shared_layers.push_back(l.layer_index);
  }

  ScopedLogCapture capture;
  Selector selector(*p.catalog, p.device, p.options);
  for (GroupPlan& g : p.groups) {
    if (a.verbose) g.all = selector.evaluate_all(g.spec);
    try {
      g.selection = selector.select(g.spec);
    } catch (const Unsupported& e) {
      if (!keep_going) throw;
      g.error = e.what();
      continue;
    }
    if (p.catalog->plan_details)
      g.details = p.catalog->plan_details(g.spec, p.device, p.options, *g.selection);
  }
  try {
    plan_kv(p, a, by_signature);
  } catch (const Unsupported& e) {
    if (!keep_going) throw;
    p.kv_error = e.what();
  }
  if (p.kv) {
    p.kv_budget = check_kv_budget(*p.kv, a);
    if (!p.kv_budget.error.empty() && !keep_going) throw OutOfMemory(p.kv_budget.error);
  }
  std::string line;
  for (char c : capture.text()) {
    if (c == '\n') {
      p.log.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  return p;
}

std::string number(double v) { return fmt::format("{:g}", v); }

std::string scale_text(const LayerSpec& s) {
  const int d = s.is_mla() ? s.mla->prefill_qk_head_size() : s.head_size;
  if (!s.softmax_scale) return fmt::format("{:.6g} (1/sqrt({}))", s.scale(), d);
  return fmt::format("{:.6g} (the model's; 1/sqrt({}) would be {:.6g})", s.scale(), d,
                     s.default_scale());
}

std::string window_text(const LayerSpec& s) {
  if (s.attention_chunk_size)
    return fmt::format("chunks of {} tokens (chunked local: a query sees its own chunk's keys)",
                       *s.attention_chunk_size);
  if (!s.sliding_window) return "full";
  if (s.window_right() > 0)
    return fmt::format(
        "{} keys on either side (symmetric; kernels get window_left = "
        "window_right = {})",
        s.window_left(), s.window_right());
  return fmt::format("{} tokens (sliding; kernels get window_left {})", *s.sliding_window,
                     s.window_left());
}

std::string heads_text(const LayerSpec& s) {
  std::string t = fmt::format("{} query / {} KV", s.num_heads, s.num_kv_heads);
  if (s.is_mla()) return t + " (MLA: one shared latent)";
  if (s.num_kv_heads > 0 && s.num_heads != s.num_kv_heads)
    t += fmt::format(" (GQA {}:1)", s.num_heads / s.num_kv_heads);
  else if (s.num_heads == s.num_kv_heads)
    t += " (MHA)";
  return t;
}

std::string attention_text(const LayerSpec& s) {
  return fmt::format("{} ({})", to_string(s.attn_type), s.causal() ? "causal" : "non-causal");
}

std::string mla_text(const MlaDims& m) {
  std::string t = fmt::format(
      "kv_lora_rank {} + rope {} = decode head size {} (v {}); prefill qk {} (nope {} + rope {}) "
      "/ v {}",
      m.kv_lora_rank, m.qk_rope_head_dim, m.decode_head_size(), m.kv_lora_rank,
      m.prefill_qk_head_size(), m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim);
  if (m.q_lora_rank) t += fmt::format("; q_lora_rank {}", m.q_lora_rank);
  if (m.sparse) t += "; sparse";
  return t;
}

std::string kv_dtype_text(const LayerSpec& s) {
  const KvCacheDType r = s.resolved_kv_dtype();
  std::string t = r == KvCacheDType::kAuto ? std::string(to_string(s.dtype)) + " (auto)"
                  : s.kv_cache_dtype == KvCacheDType::kAuto ? std::string(to_string(r)) + " (auto)"
                                                            : std::string(to_string(r));
  if (s.kv_scale_granularity != ScaleGranularity::kNone)
    t += fmt::format(", {} scales", to_string(s.kv_scale_granularity));
  return t;
}

std::string backend_text(const Selection& sel) {
  std::string t = sel.backend;
  if (!sel.variant.empty()) t += " " + sel.variant;
  if (sel.explicit_choice) return t + " (explicit choice)";
  std::string cands;
  for (size_t i = 0; i < sel.candidates.size(); ++i) cands += (i ? ", " : "") + sel.candidates[i];
  return t + fmt::format(" (first valid of [{}])", cands);
}

std::string reasons_text(const std::vector<std::string>& r) {
  std::string t;
  for (size_t i = 0; i < r.size(); ++i) t += (i ? ", " : "") + r[i];
  return t;
}

std::string state_summary(const ModelSpec& m) {
  if (m.state_layers.empty()) return "none";
  std::map<std::string, std::vector<int>> by_kind;
  for (const auto& s : m.state_layers)
    by_kind[std::string(to_string(s.kind))].push_back(s.layer_index);
  std::string t;
  for (const auto& [kind, layers] : by_kind) {
    if (!t.empty()) t += "; ";
    t += fmt::format("{} {} (layers {})", layers.size(), kind, compact_indices(layers));
  }
  return t;
}

void print_text(const Plan& p, const PlanArgs& a, std::ostream& out) {
  const ModelSpec& m = p.model;
  std::vector<std::vector<std::string>> head = {
      {"model", fmt::format("{} ({}), {}", m.name, m.model_type, m.source)},
      {"layers",
       fmt::format("{} layers; {} attention layers in {} group{}{}; {} state layers", m.num_layers,
                   m.attention_layers.size(), p.groups.size(), p.groups.size() == 1 ? "" : "s",
                   m.is_encoder_decoder ? " (decoder layers hold self- and cross-attention)" : "",
                   m.state_layers.size())},
      {"device", describe(p.device)},
      {"stack", p.catalog->name},
  };
  if (m.pooling) head.push_back({"runner", fmt::format("pooling ({})", m.runner_reason)});
  for (const std::string& n : m.notes) head.push_back({"note", n});
  out << format_columns(head);

  std::map<std::string, size_t> warned;  // cause -> the group that printed it (warn once)
  for (size_t i = 0; i < p.groups.size(); ++i) {
    const GroupPlan& g = p.groups[i];
    const LayerSpec& s = g.spec;
    out << fmt::format("\ngroup {}: layers {} ({} layer{})\n", i + 1, compact_indices(g.layers),
                       g.layers.size(), g.layers.size() == 1 ? "" : "s");
    std::vector<std::vector<std::string>> rows = {
        {"attention", attention_text(s)},
        {"heads", heads_text(s)},
        {"head size", fmt::format("{} qk / {} v", s.head_size, s.head_size_v)},
    };
    if (s.mla) rows.push_back({"MLA", mla_text(*s.mla)});
    rows.push_back({"window", window_text(s)});
    rows.push_back({"softmax scale", scale_text(s)});
    rows.push_back({"softcap", s.logits_soft_cap != 0.0 ? number(s.logits_soft_cap) : "off"});
    rows.push_back({"sinks", s.sinks ? "yes" : "no"});
    rows.push_back({"ALiBi", s.alibi ? "yes" : "no"});
    if (s.mm_prefix) rows.push_back({"mm prefix", "bidirectional multimodal prefix"});
    rows.push_back({"dtype", std::string(to_string(s.dtype))});
    rows.push_back({"KV cache dtype", kv_dtype_text(s)});
    if (s.block_size) rows.push_back({"block size", fmt::format("{} (pinned)", *s.block_size)});
    if (!g.kv_shared_layers.empty())
      rows.push_back({"KV shared", fmt::format("layers {} reuse an earlier layer's KV",
                                               compact_indices(g.kv_shared_layers))});
    if (g.selection) {
      const Selection& sel = *g.selection;
      rows.push_back({"backend", backend_text(sel)});
      for (const auto& r : sel.rejected)
        rows.push_back(
            {"passed over", fmt::format("{}: {}", r.backend,
                                        reasons_text(detailed_reasons(
                                            p.catalog->find(r.backend)->caps, r.reasons)))});
      for (const auto& w : sel.warnings) {
        auto [it, first] = warned.emplace(w.cause, i + 1);
        rows.push_back({"warning", first
                                       ? w.message
                                       : fmt::format("as for group {} (logged once)", it->second)});
      }
      for (const auto& [label, value] : g.details) rows.push_back({label, value});
    } else {
      rows.push_back({"backend", "none: " + g.error});
    }
    if (a.verbose) {
      rows.push_back(
          {"backends", fmt::format("every {} backend for this group:", p.catalog->name)});
      for (const auto& r : g.all) {
        const bool picked = g.selection && r.backend == g.selection->backend;
        rows.push_back({"  " + r.backend,
                        r.reasons.empty()
                            ? (picked ? "valid, selected" : "valid")
                            : "rejected: " + reasons_text(detailed_reasons(
                                                 p.catalog->find(r.backend)->caps, r.reasons))});
      }
    }
    for (auto& r : rows) r[0] = "  " + r[0];
    out << format_columns(rows);
  }
  out << "\n" << format_columns({{"state layers", state_summary(m)}});

  out << "\n";
  if (p.kv) {
    for (const auto& l : describe_kv_plan(*p.kv)) out << l << "\n";
    if (!p.kv_budget.error.empty()) out << "  error: " << p.kv_budget.error << "\n";
    if (!p.kv_budget.warning.empty()) out << "  warning: " << p.kv_budget.warning << "\n";
  } else {
    out << "KV cache: none: " << p.kv_error << "\n";
  }

  if (a.verbose && !p.log.empty()) {
    out << "\nselector log:\n";
    for (const auto& l : p.log) out << "  " << l << "\n";
  }
}

json plan_json(const Plan& p, const PlanArgs& a) {
  const ModelSpec& m = p.model;
  json j;
  j["model"] = {{"name", m.name},
                {"source", m.source},
                {"model_type", m.model_type},
                {"dtype", to_string(m.dtype)},
                {"config_dtype", m.config_dtype ? json(to_string(*m.config_dtype)) : json()},
                {"runner", m.pooling ? "pooling" : "generate"},
                {"runner_reason", m.runner_reason},
                {"num_layers", m.num_layers},
                {"attention_layers", m.attention_layers.size()},
                {"is_encoder_decoder", m.is_encoder_decoder},
                {"notes", m.notes}};
  j["device"] = {{"name", p.device.name},
                 {"platform", to_string(p.device.platform)},
                 {"compute_capability", fmt::format("{}.{}", p.device.cc.major, p.device.cc.minor)},
                 {"arch", p.device.arch},
                 {"preset", p.device.preset},
                 {"detected", p.device.detected},
                 {"memory_bytes", p.device.memory_bytes}};
  j["stack"] = p.catalog->name;
  j["groups"] = json::array();
  for (const GroupPlan& g : p.groups) {
    const LayerSpec& s = g.spec;
    json gj = {{"signature", s.signature()},
               {"layers", g.layers},
               {"layer_ranges", compact_indices(g.layers)},
               {"attention_type", to_string(s.attn_type)},
               {"causal", s.causal()},
               {"num_heads", s.num_heads},
               {"num_kv_heads", s.num_kv_heads},
               {"head_size", s.head_size},
               {"head_size_v", s.head_size_v},
               {"sliding_window", s.sliding_window ? json(*s.sliding_window) : json(nullptr)},
               {"attention_chunk_size",
                s.attention_chunk_size ? json(*s.attention_chunk_size) : json(nullptr)},
               {"softmax_scale", s.scale()},
               {"softmax_scale_from_model", s.softmax_scale.has_value()},
               {"logits_soft_cap", s.logits_soft_cap},
               {"sinks", s.sinks},
               {"alibi", s.alibi},
               {"mm_prefix", s.mm_prefix},
               {"dtype", to_string(s.dtype)},
               {"kv_cache_dtype", to_string(s.kv_cache_dtype)},
               {"kv_cache_dtype_resolved", to_string(s.resolved_kv_dtype())},
               {"kv_scale_granularity", to_string(s.kv_scale_granularity)},
               {"block_size", s.block_size ? json(*s.block_size) : json(nullptr)},
               {"kv_shared_layers", g.kv_shared_layers}};
    if (s.mla)
      gj["mla"] = {{"kv_lora_rank", s.mla->kv_lora_rank},
                   {"qk_nope_head_dim", s.mla->qk_nope_head_dim},
                   {"qk_rope_head_dim", s.mla->qk_rope_head_dim},
                   {"v_head_dim", s.mla->v_head_dim},
                   {"q_lora_rank", s.mla->q_lora_rank},
                   {"sparse", s.mla->sparse},
                   {"decode_head_size", s.mla->decode_head_size()},
                   {"prefill_qk_head_size", s.mla->prefill_qk_head_size()}};
    else
      gj["mla"] = nullptr;
    if (g.selection) {
      const Selection& sel = *g.selection;
      json warnings = json::array(), rejected = json::array(), details = json::array();
      for (const auto& w : sel.warnings)
        warnings.push_back({{"cause", w.cause}, {"message", w.message}});
      for (const auto& r : sel.rejected)
        rejected.push_back({{"backend", r.backend}, {"reasons", r.reasons}});
      for (const auto& [label, value] : g.details)
        details.push_back({{"label", label}, {"value", value}});
      gj["backend"] = sel.backend;
      gj["variant"] = sel.variant;
      gj["explicit_choice"] = sel.explicit_choice;
      gj["candidates"] = sel.candidates;
      gj["rejected"] = rejected;
      gj["warnings"] = warnings;
      gj["details"] = details;
    } else {
      gj["backend"] = nullptr;
      gj["error"] = g.error;
    }
    if (a.verbose) {
      json all = json::array();
      for (const auto& r : g.all)
        all.push_back(
            {{"backend", r.backend}, {"valid", r.reasons.empty()}, {"reasons", r.reasons}});
      gj["backends"] = all;
    }
    j["groups"].push_back(gj);
  }
  json state = json::array();
  for (const auto& s : m.state_layers)
    state.push_back({{"layer", s.layer_index},
                     {"kind", to_string(s.kind)},
                     {"state_bytes_per_request", s.state_bytes_per_request}});
  j["state_layers"] = state;

  if (p.kv) {
    j["kv"] = json::parse(kv_plan_to_json(*p.kv));
    if (!p.kv_budget.error.empty()) j["kv"]["error"] = p.kv_budget.error;
    if (!p.kv_budget.warning.empty()) j["kv"]["warning"] = p.kv_budget.warning;
  } else {
    j["kv"] = {{"error", p.kv_error}};
  }

  j["log"] = p.log;
  return j;
}

int run_plan(const PlanArgs& a) {
  // explain keeps going past a group nothing can run, to show every group's reasons.
  const Plan p = build_plan(a, a.verbose);
  if (a.json)
    std::cout << plan_json(p, a).dump(2) << "\n";
  else
    print_text(p, a, std::cout);
  for (const GroupPlan& g : p.groups)
    if (!g.selection) {
      std::cout.flush();
      throw Unsupported(g.error);
    }
  if (!p.kv) {
    std::cout.flush();
    throw Unsupported(p.kv_error);
  }
  if (!p.kv_budget.error.empty()) {
    std::cout.flush();
    throw OutOfMemory(p.kv_budget.error);
  }
  return kExitOk;
}

void add_plan_options(CLI::App* cmd, const std::shared_ptr<PlanArgs>& a) {
  cmd->add_option("--model,-m", a->model,
                  "config.json path, or the short name of a bundled model (e.g. llama-3.1-8b, "
                  "gemma-2-9b, deepseek-v3)")
      ->required();
  // The presets from the list the unknown-device error names, so the two cannot drift.
  cmd->add_option("--device,-d", a->device,
                  fmt::format("auto (detect), cuda, or a preset: {}",
                              fmt::join(device_preset_names(), ", ")))
      ->capture_default_str();
  cmd->add_option("--stack", a->stack,
                  "Backend catalog: native (what attnkit executes) or vllm (what vLLM would pick)")
      ->capture_default_str();
  cmd->add_option("--dtype", a->dtype, kDtypeHelp);
  cmd->add_option("--runner", a->runner, kRunnerHelp)->capture_default_str();
  cmd->add_option("--kv-cache-dtype", a->kv_cache_dtype,
                  "KV cache storage: auto (model dtype), float16, bfloat16, fp8 (= fp8_e4m3), "
                  "fp8_e5m2, nvfp4");
  cmd->add_option("--kv-cache-dtype-skip-layers", a->kv_skip,
                  "Layers kept at the model dtype's cache (vLLM's kv_cache_dtype_skip_layers): "
                  "indices and/or sliding_window, comma-separated");
  cmd->add_option("--block-size", a->block_size,
                  "Pin the KV cache block size (tokens per block) for every layer")
      ->check(block_size_range());
  cmd->add_option("--backend,-b", a->backend,
                  "Attention backend (case-insensitive), or auto. Overrides "
                  "ATTNKIT_ATTENTION_BACKEND. An invalid choice fails with its reasons");
  cmd->add_option("--variant", a->variant,
                  "Kernel generation / version to request (CUDA_FLASH: v2, v3, v4 or 2, 3, 4); "
                  "downgrades are explained as warnings");
  cmd->add_option("--memory", a->memory,
                  "KV cache budget for the blocks/tokens that fit, e.g. 80GiB (default: the "
                  "device's memory)");
  cmd->add_option("--max-tokens-per-step", a->max_tokens_per_step,
                  "Chunked-prefill token budget per step, as run takes it: a sliding window "
                  "holds its window plus one such chunk")
      ->check(CLI::Range(1, std::numeric_limits<int>::max()))
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print the plan as JSON");
}

}  // namespace

void add_plan_commands(CLI::App& app, int* exit_code) {
  auto plan_args = std::make_shared<PlanArgs>();
  auto* plan = app.add_subcommand(
      "plan",
      "Show the attention plan of a model on a device: layers grouped by signature, the backend "
      "and kernel generation selected for each group, and warnings");
  add_plan_options(plan, plan_args);
  plan->add_flag(
      "--verbose,-v", plan_args->verbose,
      "Also list every backend of the stack with its reasons for each group (= explain)");
  plan->callback([=] { *exit_code = run_plan(*plan_args); });

  auto explain_args = std::make_shared<PlanArgs>();
  auto* explain = app.add_subcommand(
      "explain",
      "Like plan, and list every backend of the stack with the reasons it was accepted or "
      "rejected for each group (= plan --verbose)");
  add_plan_options(explain, explain_args);
  explain->callback([=] {
    explain_args->verbose = true;
    *exit_code = run_plan(*explain_args);
  });
}

}  // namespace attnkit::cli
