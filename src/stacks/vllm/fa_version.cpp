// FlashAttention version policy of vLLM (spec §5.1, §5.3): fa_utils.get_flash_attn_version at
// the 2026-08-20 baseline, after #52050 (FA4 head 256 off on Blackwell).
#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "core/strings.hpp"
#include "stacks/vllm/vllm_stack.hpp"

namespace attnkit {
namespace {

// Whether a version can run here at all (vLLM's is_fa_version_supported).
std::optional<std::string> unrunnable(int v, const DeviceInfo& d, const VllmConfig& cfg) {
  const int major = d.cc.major;
  if (v == 2) {
    if (d.cc.as_int() < 80) return "FA2 needs compute capability >= 8.0";
    return std::nullopt;
  }
  if (v == 3) {
    if (!cfg.fa3_built) return "FA3 is not built in this vLLM install";
    if (major != 9) return "FA3 runs on the SM90 family only";
    return std::nullopt;
  }
  if (v == 4) {
    if (!cfg.fa4_built) return "FA4 is not built in this vLLM install";
    if (major < 9 || major > 11) return "FA4 runs on the SM90 and SM100 families only";
    return std::nullopt;
  }
  return fmt::format("FlashAttention version {} does not exist (expected 2, 3 or 4)", v);
}

}  // namespace

int parse_flash_attn_version(std::string_view s) {
  std::string l = to_lower(s);
  if (l.rfind("fa", 0) == 0)
    l = l.substr(2);
  else if (l.rfind("v", 0) == 0)
    l = l.substr(1);
  if (l == "2" || l == "3" || l == "4") return l[0] - '0';
  throw InvalidArgument(
      fmt::format("FlashAttention version '{}' is not valid for the vllm stack; expected 2, 3 or 4 "
                  "(also FA2/FA3/FA4)",
                  s));
}

FaVersion vllm_flash_attn_version(const DeviceInfo& d, const VllmConfig& cfg,
                                  const FaVersionQuery& q, std::optional<int> requested) {
  FaVersion out;
  // Rule 0: XPU always FA2; ROCm passes no version argument.
  if (d.platform == Platform::kXpu) {
    out.version = 2;
    return out;
  }
  if (d.platform != Platform::kCuda) return out;
  const int major = d.cc.major, cc = d.cc.as_int();
  const std::string ccs = fmt::format("{}.{}", d.cc.major, d.cc.minor);
  auto warn = [&](std::string cause, std::string msg) {
    out.warnings.push_back({"vllm:" + std::move(cause), std::move(msg)});
  };

  // Rule 1: default by compute capability (SM12x is not FA4 by default).
  int v = 2;
  if (major == 9 && cfg.fa3_built)
    v = 3;
  else if (major == 10 && cfg.fa4_built)
    v = 4;
  // Rule 2: attention_config.flash_attn_version (or the caller's request) replaces it.
  if (requested)
    v = *requested;
  else if (cfg.flash_attn_version)
    v = *cfg.flash_attn_version;

  // Rule 3: no FA3 on Blackwell.
  if (cc >= 100 && v == 3) {
    const int to = unrunnable(4, d, cfg) ? 2 : 4;
    warn("fa3_on_blackwell",
         fmt::format("Cannot use FA version 3 on Blackwell (compute capability {}); using FA "
                     "version {}",
                     ccs, to));
    v = to;
  }
  // Rule 4: ALiBi only in FA2.
  if (q.alibi && (v == 3 || v == 4)) {
    warn(fmt::format("fa_alibi:{}", v),
         fmt::format("Cannot use FA version {} with ALiBi; using FA version 2", v));
    v = 2;
  }
  const int hv = q.head_size_v ? q.head_size_v : q.head_size;
  // Rule 5: Hopper upgrades FA3 -> FA4 for what only FA4 runs.
  if (major == 9 && v == 3 && cfg.fa4_built) {
    std::string why;
    if (q.head_size > 256)
      why = fmt::format("head_size={} > 256", q.head_size);
    else if (q.sinks && q.head_size && hv != q.head_size)
      why = fmt::format("sinks with head_size={} != head_size_v={}", q.head_size, hv);
    else if (cfg.diffusion_model)
      why = "per-sequence dynamic causal (diffusion model)";
    if (!why.empty()) {
      out.notes.push_back(fmt::format("{}: upgrading FlashAttention 3 -> 4", why));
      v = 4;
    }
  }
  // Rule 6: batch invariance is FA2/FA3 only.
  if (cfg.batch_invariant && v == 4) {
    warn("fa4_batch_invariant",
         "Cannot use FA version 4 with batch invariance; using FA version 2");
    v = 2;
  }
  // Rule 7 (#52050): the SM100 two-CTA head-256 kernel rejects seqused_q/seqused_k, which decoder
  // attention always passes, so head 256 runs on FA2 (this replaced the sliding-window-only rule).
  if (v == 4 && cc >= 100 && q.head_size == 256) {
    warn("fa4_hd256_blackwell",
         "FA4 on Blackwell is temporarily disabled for head_size=256 (the SM100 2-CTA hd256 "
         "kernel does not support seqused_q/seqused_k, which decoder attention always passes); "
         "using FA version 2");
    v = 2;
  }
  // Rule 8: TMEM capacity: above 128 only the 192/128 MLA prefill shape.
  if (v == 4 && cc >= 100 && q.head_size > 128 && !(q.head_size == 192 && hv == 128)) {
    warn(fmt::format("fa4_tmem:{}", q.head_size),
         fmt::format("FA4 on Blackwell does not support head_size={} due to TMEM capacity limits; "
                     "using FA version 2",
                     q.head_size));
    v = 2;
  }
  // Rule 9: the chosen version must be built and runnable (vLLM asserts here).
  if (auto why = unrunnable(v, d, cfg))
    throw Unsupported(fmt::format("FlashAttention version {} cannot run on {} (compute capability "
                                  "{}): {}",
                                  v, d.name, ccs, *why),
                      {{"FLASH_ATTN", {*why}}});
  out.version = v;
  return out;
}

bool vllm_flash_attn_supports_fp8(const DeviceInfo& d, const VllmConfig& cfg, int head_size) {
  if (d.platform == Platform::kXpu) return true;
  if (d.platform != Platform::kCuda) return false;
  try {
    const auto v = vllm_flash_attn_version(d, cfg, {head_size, head_size, false, false});
    return (v.version == 3 && d.cc.major == 9) || (v.version == 4 && d.cc.major == 10);
  } catch (const Unsupported&) {
    return false;
  }
}

}  // namespace attnkit
