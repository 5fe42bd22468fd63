// The randomized differential test: where the conformance suite runs each declared cell once with
// one feature at a time, this draws layers at random from a backend's declaration with any
// combination of what it declares (window + sinks + ALiBi + softcap + PrefixLM + chunks + per-head
// fp8 scales + head_size_v != head_size, ...), random head layouts, block sizes and ragged
// batches, and one of the backend's implementation variants (registry.hpp's `variant`: ISA and
// threads on the CPU, forced split counts and parts on the GPU). Each draw the declaration accepts
// must run and match the oracle within the documented tolerance (harness.hpp); a throw is a
// failure too (a layer that passes selection must not crash), except Unsupported for the
// kernel-API windows some draws add. write_kv is drawn the same way and checked byte for byte
// against the quantizer (write_kv_check.hpp).
//
//   ATTNKIT_FUZZ_CASES=N   cases per backend (default 120: CI's share)
//   ATTNKIT_FUZZ_SEED=S    the campaign (default fixed); a failure names S and the case's index
//   ATTNKIT_FUZZ_ONLY=I    replay case I of campaign S alone (the same build: a change to the
//                          draws changes the cases)
//   ATTNKIT_FUZZ_VERBOSE=1 one line per case: its error as a fraction of the tolerance
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include "attnkit/capability.hpp"
#include "attnkit/error.hpp"
#include "cells.hpp"
#include "harness.hpp"
#include "registry.hpp"
#include "write_kv_check.hpp"

namespace attnkit::conformance {
namespace {

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* e = std::getenv(name);
  return e && *e ? std::strtoull(e, nullptr, 10) : fallback;
}

// The campaign the environment asks for: its seed, and the case indices to run.
struct Campaign {
  uint64_t seed = env_u64("ATTNKIT_FUZZ_SEED", 20261205);
  int cases = int(env_u64("ATTNKIT_FUZZ_CASES", 120));
  std::optional<int> only = std::getenv("ATTNKIT_FUZZ_ONLY")
                                ? std::optional(int(env_u64("ATTNKIT_FUZZ_ONLY", 0)))
                                : std::nullopt;
  bool verbose = std::getenv("ATTNKIT_FUZZ_VERBOSE") != nullptr;
  int first() const { return only.value_or(0); }
  int end() const { return only ? *only + 1 : cases; }
};

struct Draw {
  LayerSpec spec;
  CaseConfig cfg;
  std::vector<std::string> features;  // for the summary
  bool contiguous = false;            // an encoder's K/V in the cu_seqlens_k form
  // Kernel-API windows beyond what a layer declaration expresses (window_left and window_right
  // drawn apart, docs/semantics.md §3): the backend computes them or refuses with Unsupported.
  bool raw_window = false;
};

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  int between(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g_); }
  // Roughly log-uniform in [lo, hi]: short and long lengths alike.
  int log_between(int lo, int hi) {
    const double a = std::log(double(lo) + 1), b = std::log(double(hi) + 1);
    const int v = int(std::exp(std::uniform_real_distribution<double>(a, b)(g_)) - 1);
    return std::clamp(v, lo, hi);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[size_t(between(0, int(v.size()) - 1))];
  }
  uint64_t bits() { return g_(); }

 private:
  std::mt19937_64 g_;
};

int draw_head_size(const HeadSizeRule& r, Rng& rng) {
  if (!r.sizes.empty()) return rng.pick(r.sizes);
  const int step = std::max(1, r.multiple_of);
  const int first = (std::max(r.min, 8) + step - 1) / step * step, last = r.max ? r.max : 320;
  return first + step * rng.between(0, std::max(0, (last - first) / step));
}

int draw_block_size(const std::vector<BlockSizeEntry>& rule, Rng& rng) {
  const BlockSizeEntry& e = rng.pick(rule);
  if (!e.multiple) return e.value;
  static const std::vector<int> kTimes = {1, 1, 2, 3, 4, 5, 7, 8, 12, 16, 32, 48, 64};
  return e.value * (e.value == 1 ? rng.pick(kTimes) : rng.pick(std::vector<int>{1, 2, 4, 8}));
}

// One sequence of a batch: decode, a few speculative rows, a prefill chunk over a cache, a whole
// prompt, or an edge (no keys, no queries, more queries than keys).
SeqShape draw_seq(AttentionType type, bool mla, Rng& rng) {
  SeqShape s;
  const bool self = type == AttentionType::kEncoder || type == AttentionType::kEncoderOnly;
  if (self) {  // queries are the keys
    s.q_len = s.k_len = rng.chance(0.05) ? 0 : rng.log_between(1, 300);
    return s;
  }
  const int mode = rng.between(0, 19);
  if (mla) {
    s.q_len = mode < 14 ? 1 : rng.between(1, 4);
    s.k_len = mode == 19 ? 0 : rng.log_between(1, 2500);
    return s;
  }
  if (mode < 7) {  // decode
    s.q_len = 1;
    s.k_len = rng.log_between(1, 5000);
  } else if (mode < 10) {  // speculative rows
    s.q_len = rng.between(2, 8);
    s.k_len = s.q_len + rng.log_between(0, 3000);
  } else if (mode < 15) {  // a prefill chunk over a cache
    s.q_len = rng.log_between(2, 300);
    s.k_len = s.q_len + rng.log_between(0, 1500);
  } else if (mode < 18) {  // a whole prompt
    s.q_len = s.k_len = rng.log_between(1, 300);
  } else if (mode == 18) {  // no keys, or no queries
    s.q_len = rng.chance(0.5) ? 0 : rng.between(1, 5);
    s.k_len = s.q_len == 0 ? rng.between(0, 60) : 0;
  } else {  // more queries than keys (a causal row's first queries see nothing)
    s.k_len = rng.between(1, 20);
    s.q_len = s.k_len + rng.between(1, 10);
  }
  if (type == AttentionType::kCross) s.k_len = rng.log_between(0, 1500);  // the encoder's length
  return s;
}

// A layer from the declaration (possibly one it refuses: the caller checks) and its case.
Draw draw(const Capabilities& caps, Rng& rng, double work_budget) {
  Draw d;
  LayerSpec& s = d.spec;
  CaseConfig& c = d.cfg;
  s.dtype = rng.pick(caps.dtypes);
  s.kv_cache_dtype = rng.pick(declared_kv_dtypes(caps, s.dtype));
  const KvCacheDType kv = s.resolved_kv_dtype();
  const bool fp8 = kv == KvCacheDType::kFp8E4M3 || kv == KvCacheDType::kFp8E5M2;
  s.kv_scale_granularity = default_granularity(kv);
  if (fp8 && caps.per_head_quant_scales && rng.chance(0.4)) {
    s.kv_scale_granularity = ScaleGranularity::kPerHead;
    d.features.push_back("per-head scales");
  }
  const bool mla_declared = caps.mla != MlaSupport::kStandardOnly && caps.head_sizes.accepts(576) &&
                            contains_type(caps, AttentionType::kDecoder);
  const bool mla = mla_declared && (caps.mla == MlaSupport::kMlaOnly || rng.chance(0.08));
  s.attn_type = mla ? AttentionType::kDecoder
                    : (contains_type(caps, AttentionType::kDecoder) && rng.chance(0.6)
                           ? AttentionType::kDecoder
                           : rng.pick(caps.attn_types));
  if (mla) {
    s.mla = MlaDims{512, 128, 64, 128, 1536, false};
    s.head_size = 576;
    s.head_size_v = 512;
    s.num_kv_heads = 1;
    s.num_heads = rng.pick(std::vector<int>{1, 4, 8, 16, 32, 128});
    d.features.push_back("mla");
  } else {
    s.head_size = s.head_size_v = draw_head_size(caps.head_sizes, rng);
    if (!caps.asymmetric_head_sizes.empty() && rng.chance(0.15)) {
      const auto& p = rng.pick(caps.asymmetric_head_sizes);
      s.head_size = p.first;
      s.head_size_v = p.second;
    } else if (caps.any_head_size_v && rng.chance(0.15)) {
      s.head_size_v = draw_head_size(caps.head_sizes, rng);
    }
    if (s.head_size_v != s.head_size) d.features.push_back("head_size_v");
    s.num_kv_heads = rng.between(1, 4);
    s.num_heads = s.num_kv_heads * rng.pick(std::vector<int>{1, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16});
  }
  s.block_size = draw_block_size(caps.kernel_block_sizes, rng);
  const bool encoder =
      s.attn_type == AttentionType::kEncoder || s.attn_type == AttentionType::kEncoderOnly;
  if (caps.sliding_window && !mla && rng.chance(0.35)) {
    s.sliding_window = rng.log_between(1, 400);
    d.features.push_back("window");
  }
  if (caps.alibi && rng.chance(0.3)) s.alibi = true, d.features.push_back("alibi");
  if (caps.sinks && rng.chance(0.3)) s.sinks = true, d.features.push_back("sinks");
  if (caps.logits_soft_cap && rng.chance(0.3)) {
    s.logits_soft_cap = rng.between(2, 50);
    d.features.push_back("softcap");
  }
  if (caps.mm_prefix && s.attn_type == AttentionType::kDecoder && !mla && rng.chance(0.2)) {
    s.mm_prefix = true;
    d.features.push_back("mm-prefix");
  }
  if (caps.chunked_local && !mla && s.attn_type != AttentionType::kEncoder && rng.chance(0.2)) {
    int chunk = rng.log_between(1, 300);
    if (caps.chunk_in_whole_blocks) chunk = std::max(1, chunk / *s.block_size) * *s.block_size;
    s.attention_chunk_size = chunk;
    d.features.push_back("chunked");
  }
  if (encoder && caps.supports_metadata(MetadataForm::kCuSeqlensK) && !s.attention_chunk_size &&
      rng.chance(0.5)) {
    d.contiguous = true;
    d.features.push_back("cu_seqlens_k");
  }
  d.features.push_back(std::string(to_string(s.attn_type)));
  d.features.push_back(std::string(to_string(s.dtype)));
  d.features.push_back("kv:" + std::string(kv == KvCacheDType::kAuto ? "fp32" : to_string(kv)));

  c.dtype = s.dtype;
  c.kv_dtype = kv;
  c.scale_granularity = s.kv_scale_granularity;
  c.num_heads = s.num_heads;
  c.num_kv_heads = s.num_kv_heads;
  c.head_size = s.head_size;
  c.head_size_v = s.head_size_v;
  c.block_size = *s.block_size;
  c.mla = mla;
  c.causal = s.causal();
  c.window_left = s.window_left();  // as serving passes a layer's window
  c.window_right = s.window_right();
  if (caps.sliding_window && !mla && rng.chance(0.15)) {
    d.raw_window = true;
    c.window_left = rng.chance(0.3) ? -1 : rng.log_between(0, 300);
    c.window_right = rng.chance(0.3) ? -1 : rng.log_between(0, 300);
    d.features.push_back("raw window");
  }
  c.attention_chunk_size = s.attention_chunk_size.value_or(0);
  c.softcap = float(s.logits_soft_cap);
  c.alibi = s.alibi;
  c.sinks = s.sinks;
  c.mm_prefix = s.mm_prefix;
  // Mostly moderate logits; a few layers with logits in the hundreds (row maxima far from the
  // rest, exp underflow), where the bound widens with the gain.
  c.q_gain = rng.chance(0.5)   ? 1.f
             : rng.chance(0.1) ? float(rng.pick(std::vector<int>{12, 30}))
                               : float(rng.between(2, 8)) / 2.f;
  if (c.q_gain > 4) d.features.push_back("large logits");
  c.shuffle_blocks = rng.chance(0.85);
  c.padded_strides = rng.chance(0.5);
  c.with_lse = rng.chance(0.8);
  if (rng.chance(0.2)) {
    c.extra_max_seqlen_q = rng.log_between(1, 64);
    c.extra_max_seqlen_k = rng.log_between(1, 4096);
    d.features.push_back("loose max_seqlen");
  }
  c.seed = rng.bits();
  c.seqs.clear();
  const int n = rng.chance(0.3) ? 1 : rng.between(2, 6);
  for (int i = 0; i < n; ++i) c.seqs.push_back(draw_seq(s.attn_type, mla, rng));
  // Within the work budget: halve the longest sequence's lengths until it fits.
  while (case_work(c) > work_budget) {
    auto it = std::max_element(c.seqs.begin(), c.seqs.end(), [](auto& a, auto& b) {
      return double(a.q_len) * a.k_len < double(b.q_len) * b.k_len;
    });
    it->q_len = std::max(it->q_len > 0 ? 1 : 0, it->q_len / 2);
    it->k_len = encoder ? it->q_len : it->k_len / 2;
  }
  return d;
}

// A draw the declaration accepts: refused draws are drawn again, counted in `refused`.
Draw accepted_draw(const Capabilities& caps, const DeviceInfo& dev, Rng& rng, double budget,
                   int& refused) {
  Draw d = draw(caps, rng, budget);
  for (int tries = 0; !invalid_reasons(caps, d.spec, dev).empty(); ++tries) {
    ++refused;
    if (tries >= 1000) throw std::logic_error(caps.name + ": the declaration refuses every draw");
    d = draw(caps, rng, budget);
  }
  return d;
}

class Fuzz : public ::testing::TestWithParam<BackendEntry> {};

TEST_P(Fuzz, RandomLayersMatchTheOracle) {
  const BackendEntry& entry = GetParam();
  if (!entry.runnable()) GTEST_SKIP() << entry.name << " needs a GPU; none present";
  const Campaign c;
  const uint64_t campaign = c.seed;
  const Capabilities& caps = entry.capabilities();
  const DeviceInfo dev = entry.device();
  auto memory = entry.make_memory();
  auto reference = make_cpu_reference_backend();
  // The fp64 oracles are the time: CPU_REFERENCE's own check (against the naive loop) takes
  // smaller cases.
  const double budget = entry.check_against_naive ? 3e6 : 2e7;
  int refused = 0, failed = 0, run = 0, refused_at_run = 0;
  double worst = 0;
  std::string worst_case;
  std::map<std::string, int> seen;
  for (int i = c.first(); i < c.end(); ++i) {
    Rng rng(campaign * 0x9E3779B97F4A7C15ull + uint64_t(i) * 1000003ull);
    Draw d = accepted_draw(caps, dev, rng, budget, refused);
    std::string variant = "default";
    std::unique_ptr<AttentionBackend> backend =
        entry.variant ? entry.variant(rng.bits(), &variant) : entry.factory();
    const HostCase paged = build_case(d.cfg);
    const HostCase hc = d.contiguous ? contiguous_form(paged) : paged;
    std::string problem;
    double ratio = 0;
    try {
      const RunOutput got = run_case(*backend, hc, *memory);
      HostMemory host;
      const RunOutput want =
          entry.check_against_naive ? naive_attention(paged) : run_case(*reference, paged, host);
      const Tolerance tol = entry.check_against_naive ? fp64_agreement(hc)
                                                      : tolerance_for(hc, entry.tolerance_factor);
      problem = compare(got, want, tol);
      if (problem.empty()) ratio = worst_ratio(got, want, tol);
    } catch (const Unsupported& e) {
      if (d.raw_window) {
        ++refused_at_run;
        continue;
      }
      problem = std::string("threw: ") + e.what();
    } catch (const std::exception& e) {
      problem = std::string("threw: ") + e.what();
    }
    ++run;
    for (const std::string& f : d.features) ++seen[f];
    if (!problem.empty()) {
      if (++failed <= 10)
        ADD_FAILURE() << entry.name << " case " << i << " (ATTNKIT_FUZZ_SEED=" << campaign
                      << " ATTNKIT_FUZZ_ONLY=" << i << ") [" << variant << "] ["
                      << hc.cfg.describe() << (d.contiguous ? ", cu_seqlens_k" : "")
                      << "]: " << problem;
      continue;
    }
    if (c.verbose)
      std::cout << "case " << i << " ratio " << ratio << " [" << variant << "] ["
                << hc.cfg.describe() << (d.contiguous ? ", cu_seqlens_k" : "") << "]\n";
    if (ratio > worst) {
      worst = ratio;
      worst_case = "case " + std::to_string(i) + " [" + variant + "] [" + hc.cfg.describe() +
                   (d.contiguous ? ", cu_seqlens_k" : "") + "]";
    }
  }
  EXPECT_EQ(failed, 0) << failed << " of " << run << " random layers failed";
  std::cout << "fuzz: " << entry.name << " " << run << " random layers (campaign " << campaign
            << "; " << refused << " draws refused by the declaration, " << refused_at_run
            << " kernel-API windows refused at run), " << failed << " failed; worst error " << worst
            << " of tolerance\n  features:";
  for (const auto& [f, n] : seen) std::cout << " " << f << " " << n << ";";
  std::cout << std::endl;
  if (!worst_case.empty()) std::cout << "  worst: " << worst_case << std::endl;
}

// write_kv at random from the declaration: model and KV dtypes, per-head scales, head pairs (MLA's
// latent row), 1-8 KV heads, block sizes, 1-4000 tokens with padding slots, input rows in padded
// or fused-QKV strides, and fp8/nvfp4 scales that saturate or underflow as well as fit.
TEST_P(Fuzz, WriteKvMatchesTheQuantizer) {
  const BackendEntry& entry = GetParam();
  if (!entry.runnable()) GTEST_SKIP() << entry.name << " needs a GPU; none present";
  const Campaign c;
  const uint64_t campaign = c.seed;
  const Capabilities& caps = entry.capabilities();
  const DeviceInfo dev = entry.device();
  auto memory = entry.make_memory();
  auto backend = entry.factory();
  int failed = 0, run = 0, refused = 0;
  std::map<std::string, int> seen;
  for (int i = c.first(); i < c.end(); ++i) {
    Rng rng((campaign ^ 0x5851F42D4C957F2Dull) * 0x9E3779B97F4A7C15ull + uint64_t(i) * 1000003ull);
    const Draw d = accepted_draw(caps, dev, rng, 2e7, refused);  // the layer
    const LayerSpec& s = d.spec;
    WriteKvCase w;
    w.dtype = s.dtype;
    w.kv_dtype = s.resolved_kv_dtype();
    w.per_head = s.kv_scale_granularity == ScaleGranularity::kPerHead;
    w.mla = s.mla.has_value();
    w.num_kv_heads = w.mla ? 1 : rng.between(1, 8);
    w.head_size = s.head_size;
    w.head_size_v = s.head_size_v;
    w.block_size = *s.block_size;
    w.num_tokens = rng.chance(0.1) ? rng.between(0, 2) : rng.log_between(1, 4000);
    w.skip = rng.pick(std::vector<double>{0, 0, 0.1, 0.5, 0.95});
    if (rng.chance(0.5)) w.pad_head = rng.pick(std::vector<int>{1, 3, 8, 64});
    if (rng.chance(0.5))  // a K or V slice of a fused QKV row: the other heads sit between tokens
      w.pad_token = rng.chance(0.5) ? rng.between(1, 9) : w.head_size * rng.between(2, 40);
    auto elements = [&] {
      return double(w.num_tokens) *
             (double(w.num_kv_heads) * (std::max(w.head_size, w.head_size_v) + w.pad_head) +
              w.pad_token);
    };
    while (elements() > 2e6) w.num_tokens /= 2;
    w.padded_cache = rng.chance(0.5);
    w.gain = rng.pick(std::vector<float>{1, 1, 0.01f, 40, 1000});
    w.fill = rng.pick(std::vector<float>{0.45f, 0.45f, 0.9f, 1.f, 3.f, 1e-3f});
    w.spare_blocks = rng.between(0, 3);
    w.seed = rng.bits();
    const std::string problem = check_write_kv(*backend, *memory, w);
    ++run;
    ++seen[w.kv_dtype == KvCacheDType::kAuto ? "kv:fp32"
                                             : "kv:" + std::string(to_string(w.kv_dtype))];
    if (w.fill > 1 && is_quantized(w.kv_dtype)) ++seen["saturating"];
    if (w.pad_token) ++seen["token-padded input"];
    if (w.mla) ++seen["mla"];
    if (!problem.empty()) {
      if (++failed <= 10)
        ADD_FAILURE() << entry.name << " write_kv case " << i << " (ATTNKIT_FUZZ_SEED=" << campaign
                      << " ATTNKIT_FUZZ_ONLY=" << i << ") [" << w.describe() << "]: " << problem;
      continue;
    }
    if (c.verbose) std::cout << "write_kv case " << i << " ok [" << w.describe() << "]\n";
  }
  EXPECT_EQ(failed, 0) << failed << " of " << run << " random write_kv calls failed";
  std::cout << "fuzz: " << entry.name << " " << run << " random write_kv calls (campaign "
            << campaign << "; " << refused << " draws refused by the declaration), " << failed
            << " failed\n  features:";
  for (const auto& [f, n] : seen) std::cout << " " << f << " " << n << ";";
  std::cout << std::endl;
}

// The draws mostly land inside each declaration, GPU backends' included (checked on any machine,
// so a GPU run spends its time on layers, not on redraws).
TEST_P(Fuzz, DrawsMostlyLandInsideTheDeclaration) {
  const BackendEntry& entry = GetParam();
  const Capabilities& caps = entry.capabilities();
  const DeviceInfo dev = entry.device();
  int refused = 0;
  constexpr int kDraws = 400;
  for (int i = 0; i < kDraws; ++i) {
    Rng rng(uint64_t(i) * 7919 + 1);
    if (!invalid_reasons(caps, draw(caps, rng, 2e7).spec, dev).empty()) ++refused;
  }
  EXPECT_LE(refused, kDraws / 2) << entry.name;
  std::cout << "fuzz: " << entry.name << " " << refused << " of " << kDraws
            << " draws refused by the declaration on " << dev.name << std::endl;
}

INSTANTIATE_TEST_SUITE_P(Backends, Fuzz, ::testing::ValuesIn(backends_under_test()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace attnkit::conformance
