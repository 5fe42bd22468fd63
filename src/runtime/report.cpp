#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "attnkit/runtime.hpp"

namespace attnkit {

std::string format_run_report(const RunReport& r) {
  std::string s;
  s += fmt::format("model {} in {} on {}\n", r.model, to_string(r.dtype), r.device);
  s += fmt::format("{} steps ({} with prefill): {}{} prefill + {} decode tokens in {:.2f} s\n",
                   r.steps, r.prefill_steps,
                   r.encoder_tokens ? fmt::format("{} encoder + ", r.encoder_tokens) : "",
                   r.prefill_tokens, r.decode_tokens, r.wall_seconds);
  if (r.kv_blocks_total == 0)
    s += "KV cache: none\n";
  else
    s += fmt::format("KV cache: {} blocks ({:.1f} MiB), peak {} used, {} zeroed{}\n",
                     r.kv_blocks_total, double(r.kv_bytes_allocated) / (1 << 20),
                     r.kv_blocks_peak_used, r.kv_blocks_zeroed,
                     r.zeroing_on ? "" : " (zeroing not needed for this model)");
  for (const auto& n : r.kv_notes) s += fmt::format("  note: {}\n", n);
  if (r.state_layers)
    s += fmt::format("{} mamba/linear-attention layers hold state pages (not attention)\n",
                     r.state_layers);
  for (const auto& g : r.groups) {
    s += fmt::format("- {}\n", g.description);
    s += fmt::format("    backend {}{}  {}\n", g.backend, g.variant.empty() ? "" : " " + g.variant,
                     g.kv_group < 0 ? std::string("contiguous K/V (cu_seqlens_k form)")
                                    : fmt::format("kv group {} (kernel block {})", g.kv_group,
                                                  g.kernel_block_size));
    s += fmt::format(
        "    {:.0f} tokens/s (query tokens x layers / attention time), {:.2f} GFLOP/s, "
        "{:.2f} GB/s KV read, {:.3f} s attention\n",
        g.tokens_per_second(), g.gflops(), g.kv_gbps(), g.seconds);
    if (g.two_part_steps)
      s += fmt::format("    {} steps ran their decodes and prefill chunks as two parts\n",
                       g.two_part_steps);
    if (g.verified_layers)
      s += fmt::format(
          "    verified {} layer runs against CPU_REFERENCE{}{}: max |err| {:.3g} "
          "(tolerance {:.3g}) {}\n",
          g.verified_layers,
          g.verified_rows < g.verified_rows_of
              ? fmt::format(" ({} of their {} query rows)", g.verified_rows, g.verified_rows_of)
              : "",
          g.oracle_is_backend() ? " (the backend itself: this checks the cache's writes, "
                                  "slots and block tables, not a kernel)"
                                : "",
          g.max_abs_error, g.tolerance, g.verified_ok ? "OK" : "FAILED");
  }
  if (r.verified) s += r.ok() ? "verification: OK\n" : "verification: FAILED\n";
  return s;
}

std::string run_report_to_json(const RunReport& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["dtype"] = to_string(r.dtype);
  j["device"] = r.device;
  j["steps"] = r.steps;
  j["prefill_tokens"] = r.prefill_tokens;
  j["decode_tokens"] = r.decode_tokens;
  j["encoder_tokens"] = r.encoder_tokens;
  j["wall_seconds"] = r.wall_seconds;
  j["kv"] = {{"blocks_total", r.kv_blocks_total},
             {"blocks_peak_used", r.kv_blocks_peak_used},
             {"blocks_zeroed", r.kv_blocks_zeroed},
             {"bytes_allocated", r.kv_bytes_allocated},
             {"zeroing", r.zeroing_on},
             {"notes", r.kv_notes}};
  j["state_layers"] = r.state_layers;
  for (const auto& g : r.groups) {
    nlohmann::json gj = {{"description", g.description},
                         {"backend", g.backend},
                         {"variant", g.variant},
                         {"layers", g.num_layers},
                         {"kv_group", g.kv_group},
                         {"kernel_block_size", g.kernel_block_size},
                         {"attention_seconds", g.seconds},
                         {"tokens_per_second", g.tokens_per_second()},
                         {"gflops", g.gflops()},
                         {"kv_gbps", g.kv_gbps()},
                         {"two_part_steps", g.two_part_steps},
                         {"verified_layer_runs", g.verified_layers}};
    if (g.verified_layers) {
      gj["max_abs_error"] = g.max_abs_error;
      gj["tolerance"] = g.tolerance;
      gj["verified_ok"] = g.verified_ok;
      gj["verified_rows"] = g.verified_rows;
      gj["verified_rows_of"] = g.verified_rows_of;
      gj["oracle_is_backend"] = g.oracle_is_backend();
    }
    j["groups"].push_back(gj);
  }
  j["verified"] = r.verified;
  j["ok"] = r.ok();
  return j.dump(2);
}

}  // namespace attnkit
