// The conformance suite: for every backend of registry.hpp, every cell generated from its
// capability declaration runs against the oracle (CPU_REFERENCE; the reference itself against
// an independent naive fp64 derivation), plus the cross-checks: features change the output,
// batched == one request at a time, paged == contiguous, undeclared cells are refused with a
// reason, write_kv matches the documented quantizer. Set ATTNKIT_CONFORMANCE_SEED to vary inputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "attnkit/capability.hpp"
#include "attnkit/error.hpp"
#include "cells.hpp"
#include "harness.hpp"
#include "registry.hpp"
#include "write_kv_check.hpp"

namespace attnkit::conformance {
namespace {

uint64_t base_seed() {
  static const uint64_t s = [] {
    const char* e = std::getenv("ATTNKIT_CONFORMANCE_SEED");
    return e ? std::strtoull(e, nullptr, 10) : uint64_t(20261129);
  }();
  return s;
}
uint64_t seed_for(int index) { return base_seed() * 1000003ull + uint64_t(index); }

class Conformance : public ::testing::TestWithParam<BackendEntry> {
 protected:
  const BackendEntry& entry() const { return GetParam(); }
  const Capabilities& caps() const { return entry().capabilities(); }

  void SetUp() override { reference_ = make_cpu_reference_backend(); }

  // Cells the declaration accepts on the entry's device.
  std::vector<Cell> valid_cells(int* excluded = nullptr) const {
    const DeviceInfo dev = entry().device();
    std::vector<Cell> out;
    for (const Cell& c : enumerate_cells(caps())) {
      if (invalid_reasons(caps(), c.spec(), dev).empty())
        out.push_back(c);
      else if (excluded)
        ++*excluded;
    }
    return out;
  }

  // A cheap representative cell: bf16 if declared, head size 128 if declared, plain attention.
  Cell base_cell() const {
    std::vector<Cell> cells = valid_cells();
    EXPECT_FALSE(cells.empty());
    auto score = [](const Cell& c) {
      return (c.dtype == DType::kBFloat16 ? 4 : 0) + (c.head_size == 128 ? 2 : 0) +
             (c.feature == Feature::kCausal || c.feature == Feature::kMlaDecode ? 8 : 0) +
             (c.kv_dtype == KvCacheDType::kAuto ? 1 : 0);
    };
    return *std::max_element(cells.begin(), cells.end(),
                             [&](const Cell& a, const Cell& b) { return score(a) < score(b); });
  }

  // Whether the cell's layer also runs with PrefixLM ranges (the equivalence tests then give them).
  bool takes_mm_prefix(const Cell& c) const {
    LayerSpec spec = c.spec();
    spec.mm_prefix = true;
    return caps().mm_prefix && invalid_reasons(caps(), spec, entry().device()).empty();
  }

  RunOutput oracle(const HostCase& hc) {
    if (entry().check_against_naive) return naive_attention(hc);
    HostMemory host;
    return run_case(*reference_, hc, host);
  }
  Tolerance tol(const HostCase& hc) const {
    return entry().check_against_naive ? fp64_agreement(hc)
                                       : tolerance_for(hc, entry().tolerance_factor);
  }

  std::unique_ptr<AttentionBackend> reference_;
};

TEST_P(Conformance, DeclaredCellsMatchOracle) {
  if (!entry().runnable()) {
    std::cout << "conformance: " << entry().name << " 0 cells checked (" << valid_cells().size()
              << " declared; needs a GPU, none present)" << std::endl;
    GTEST_SKIP() << entry().name << " needs a GPU; none present";
  }
  auto backend = entry().factory();
  auto memory = entry().make_memory();
  int excluded = 0, checked = 0, failed = 0;
  double worst = 0;  // largest error / tolerance over the passing cells
  std::string worst_cell;
  const std::vector<Cell> cells = valid_cells(&excluded);
  std::set<std::string> dtypes, kvs, heads, blocks, features;
  for (size_t i = 0; i < cells.size(); ++i) {
    const Cell& cell = cells[i];
    const HostCase hc = build_case(case_for_cell(cell, int(i), seed_for(int(i))));
    std::string problem;
    try {
      const RunOutput got = run_case(*backend, hc, *memory), want = oracle(hc);
      problem = compare(got, want, tol(hc));
      const double ratio = problem.empty() ? worst_ratio(got, want, tol(hc)) : 0.0;
      if (ratio > worst) {
        worst = ratio;
        worst_cell = cell.describe() + " / " + hc.cfg.describe();
      }
    } catch (const std::exception& e) {
      problem = std::string("threw: ") + e.what();
    }
    if (!problem.empty()) {
      if (++failed <= 15)
        ADD_FAILURE() << entry().name << " cell " << i << " [" << cell.describe() << "] case ["
                      << hc.cfg.describe() << "]: " << problem;
      continue;
    }
    ++checked;
    dtypes.insert(std::string(to_string(cell.dtype)));
    kvs.insert(std::string(to_string(cell.kv_dtype)));
    heads.insert(std::to_string(cell.head_size));
    blocks.insert(std::to_string(cell.block_size));
    features.insert(to_string(cell.feature));
  }
  EXPECT_EQ(failed, 0) << failed << " of " << cells.size() << " cells failed";
  EXPECT_GT(checked, 0);
  // Every declared value of every dimension ran at least once.
  for (DType d : caps().dtypes)
    EXPECT_TRUE(dtypes.count(std::string(to_string(d)))) << to_string(d);
  for (int b : representative_block_sizes(caps().kernel_block_sizes))
    EXPECT_TRUE(blocks.count(std::to_string(b))) << "block size " << b;
  std::cout << "conformance: " << entry().name << " " << checked << " cells checked (" << excluded
            << " excluded by the combination rule; dtypes " << dtypes.size() << ", kv dtypes "
            << kvs.size() << ", head sizes " << heads.size() << ", block sizes " << blocks.size()
            << ", features " << features.size() << "; worst error " << worst
            << " of tolerance; seed " << base_seed() << ")" << std::endl;
  if (!worst_cell.empty()) std::cout << "  worst cell: " << worst_cell << std::endl;
}

// Switching a feature on must change the output (never silently ignored), and the switched-on
// output must still match the oracle.
TEST_P(Conformance, EveryFeatureChangesTheOutput) {
  if (!entry().runnable()) GTEST_SKIP() << entry().name << " needs a GPU; none present";
  auto backend = entry().factory();
  auto memory = entry().make_memory();
  const Cell base = base_cell();
  CaseConfig off = case_for_cell(base, 1, seed_for(100001));
  off.seqs = {{5, 97}, {1, 54}, {3, 130}};
  off.q_gain = 2.f;  // the same inputs serve the softcap case (logits above the cap)
  struct Variant {
    const char* name;
    bool declared;
    std::function<void(CaseConfig&, LayerSpec&)> on;
  };
  const std::vector<Variant> variants = {
      {"softcap", caps().logits_soft_cap,
       [](CaseConfig& c, LayerSpec& s) { c.softcap = 2.f, s.logits_soft_cap = 2.0; }},
      {"sinks", caps().sinks, [](CaseConfig& c, LayerSpec& s) { c.sinks = s.sinks = true; }},
      {"sliding window", caps().sliding_window,
       [](CaseConfig& c, LayerSpec& s) { c.window_left = 15, s.sliding_window = 16; }},
      {"alibi", caps().alibi, [](CaseConfig& c, LayerSpec& s) { c.alibi = s.alibi = true; }},
      {"mm prefix", caps().mm_prefix,
       [](CaseConfig& c, LayerSpec& s) { c.mm_prefix = s.mm_prefix = true; }},
      {"chunked local", caps().chunked_local,
       [](CaseConfig& c, LayerSpec& s) {
         c.attention_chunk_size = 32, s.attention_chunk_size = 32;
       }},
      {"non-causal", caps().non_causal && contains_type(caps(), AttentionType::kCross),
       [](CaseConfig& c, LayerSpec& s) { c.causal = false, s.attn_type = AttentionType::kCross; }},
  };
  const HostCase hc_off = build_case(off);
  const RunOutput out_off = run_case(*backend, hc_off, *memory), want_off = oracle(hc_off);
  EXPECT_EQ(compare(out_off, want_off, tol(hc_off)), "");
  int tried = 0;
  for (const Variant& v : variants) {
    if (!v.declared) continue;
    CaseConfig on = off;
    LayerSpec spec = base.spec();
    v.on(on, spec);
    ASSERT_TRUE(invalid_reasons(caps(), spec, entry().device()).empty()) << v.name;
    const HostCase hc_on = build_case(on);
    const RunOutput out_on = run_case(*backend, hc_on, *memory);
    EXPECT_EQ(compare(out_on, oracle(hc_on), tol(hc_on)), "") << v.name;
    // Ignoring the feature would land within tolerance of the feature-off answer.
    EXPECT_NE(compare(out_on, want_off, tol(hc_on)), "")
        << v.name << " did not change the output of " << entry().name;
    EXPECT_GT(max_abs_diff(out_on, want_off), 0.05) << v.name << ": the case is too weak";
    ++tried;
  }
  std::cout << "conformance: " << entry().name << " " << tried << " features change the output"
            << std::endl;
}

// A batch gives, row for row, what each of its requests gives alone.
TEST_P(Conformance, BatchedEqualsOneRequestAtATime) {
  if (!entry().runnable()) GTEST_SKIP() << entry().name << " needs a GPU; none present";
  auto backend = entry().factory();
  auto memory = entry().make_memory();
  const Cell base = base_cell();
  CaseConfig cfg = case_for_cell(base, 4, seed_for(100002));
  cfg.seqs = base.feature == Feature::kMlaDecode
                 ? std::vector<SeqShape>{{1, 523}, {1, 0}, {2, 37}, {1, 1}}
                 : std::vector<SeqShape>{{1, 523}, {5, 97}, {0, 17}, {3, 1}, {1, 0}, {17, 54}};
  if (caps().sinks) cfg.sinks = true;
  cfg.mm_prefix = takes_mm_prefix(base);
  cfg.with_lse = true;  // the slices below copy it
  const HostCase hc = build_case(cfg);
  const RunOutput batched = run_case(*backend, hc, *memory);
  EXPECT_EQ(compare(batched, oracle(hc), tol(hc)), "");
  for (size_t s = 0; s < cfg.seqs.size(); ++s) {
    const HostCase one = single_sequence(hc, int(s));
    const RunOutput alone = run_case(*backend, one, *memory);
    RunOutput slice = alone;
    const int q0 = hc.cu_seqlens_q[s];
    const size_t row = size_t(hc.cfg.num_heads) * hc.cfg.head_size_v;
    std::copy(batched.out.begin() + q0 * row, batched.out.begin() + (q0 + one.total_q) * row,
              slice.out.begin());
    std::copy(batched.lse.begin() + q0 * hc.cfg.num_heads,
              batched.lse.begin() + (q0 + one.total_q) * hc.cfg.num_heads, slice.lse.begin());
    slice.written_outside = 0;
    EXPECT_EQ(compare(alone, slice, tol(hc)), "") << "sequence " << s;
  }
}

// The same logical cache, paged through shuffled small blocks or held as one block per sequence.
TEST_P(Conformance, PagedEqualsContiguous) {
  if (!entry().runnable()) GTEST_SKIP() << entry().name << " needs a GPU; none present";
  auto backend = entry().factory();
  auto memory = entry().make_memory();
  const Cell base = base_cell();
  CaseConfig paged = case_for_cell(base, 5, seed_for(100003));
  paged.seqs = base.feature == Feature::kMlaDecode
                   ? std::vector<SeqShape>{{1, 97}, {1, 54}, {2, 1}}
                   : std::vector<SeqShape>{{5, 97}, {1, 54}, {3, 1}};
  paged.block_size = representative_block_sizes(caps().kernel_block_sizes).front();
  paged.mm_prefix = takes_mm_prefix(base);
  const int longest = paged.longest_kv();
  int contiguous = 0;
  for (const auto& e : caps().kernel_block_sizes) {
    const int b = e.multiple ? (longest + e.value - 1) / e.value * e.value
                             : (e.value >= longest ? e.value : 0);
    if (b && (!contiguous || b < contiguous)) contiguous = b;
  }
  if (!contiguous) GTEST_SKIP() << "no declared block size holds " << longest << " tokens";
  CaseConfig whole = paged;
  whole.block_size = contiguous;
  whole.shuffle_blocks = false;
  whole.padded_strides = false;
  const HostCase hp = build_case(paged), hw = build_case(whole);
  ASSERT_EQ(hp.kd, hw.kd);  // the same logical cache
  const RunOutput a = run_case(*backend, hp, *memory), b = run_case(*backend, hw, *memory);
  EXPECT_EQ(compare(a, oracle(hp), tol(hp)), "");
  EXPECT_EQ(compare(b, a, tol(hp)), "")
      << "paged (block " << paged.block_size << ") vs contiguous (block " << contiguous << ")";
}

// Encoder self-attention's cu_seqlens_k form (contiguous K/V rows; one block per sequence,
// starting at its offset) gives what the paged form of the same keys gives, at every declared
// encoder type, with and without a symmetric window.
TEST_P(Conformance, ContiguousEncoderFormEqualsPaged) {
  if (!caps().supports_metadata(MetadataForm::kCuSeqlensK))
    GTEST_SKIP() << entry().name << " declares no cu_seqlens_k form";
  if (!entry().runnable()) GTEST_SKIP() << entry().name << " needs a GPU; none present";
  auto backend = entry().factory();
  auto memory = entry().make_memory();
  int tried = 0;
  for (AttentionType t : {AttentionType::kEncoder, AttentionType::kEncoderOnly})
    for (bool window : {false, true}) {
      Cell cell = base_cell();
      cell.attn_type = t;
      cell.feature = window ? Feature::kEncoderOnlyWindow : Feature::kNonCausal;
      cell.window = window ? 17 : 0;
      if (!contains_type(caps(), t) || (window && t != AttentionType::kEncoderOnly) ||
          !invalid_reasons(caps(), cell.spec(), entry().device()).empty())
        continue;
      CaseConfig cfg = case_for_cell(cell, 7, seed_for(100004 + tried));
      cfg.seqs = {{97, 97}, {1, 1}, {0, 0}, {130, 130}, {54, 54}};
      cfg.window_left = cfg.window_right = window ? 16 : -1;
      cfg.with_lse = true;
      const HostCase paged = build_case(cfg), contiguous = contiguous_form(paged);
      const RunOutput want = oracle(paged);
      EXPECT_EQ(compare(run_case(*backend, paged, *memory), want, tol(paged)), "")
          << to_string(t) << (window ? " window" : "");
      EXPECT_EQ(compare(run_case(*backend, contiguous, *memory), want, tol(paged)), "")
          << "cu_seqlens_k form, " << to_string(t) << (window ? " window" : "");
      ++tried;
    }
  EXPECT_GT(tried, 0) << entry().name << " declares cu_seqlens_k but no encoder type";
}

// A cell outside the declaration is refused with the reason naming it.
TEST_P(Conformance, UndeclaredCellsAreRefused) {
  const Cell base = base_cell();
  const DeviceInfo dev = entry().device();
  int n = 0;
  for (const UndeclaredCell& u : undeclared_cells(caps(), base)) {
    const auto reasons = invalid_reasons(caps(), u.spec, dev);
    EXPECT_NE(std::find(reasons.begin(), reasons.end(), u.reason), reasons.end())
        << entry().name << ": " << u.what << " should be refused with \"" << u.reason << "\"";
    ++n;
  }
  // The other platform is refused too.
  const DeviceInfo other =
      entry().requires_gpu ? device_from_name("cpu") : device_from_name("h100");
  const auto reasons = invalid_reasons(caps(), base.spec(), other);
  if (!caps().platforms.empty()) {
    EXPECT_FALSE(reasons.empty()) << entry().name << " accepted platform "
                                  << to_string(other.platform);
  }
  std::cout << "conformance: " << entry().name << " " << n + 1 << " undeclared cells refused"
            << std::endl;
}

// write_kv stores exactly what the documented quantizer (docs/semantics.md §2) stores, skips
// slot -1 and touches nothing else.
TEST_P(Conformance, WriteKvMatchesTheQuantizer) {
  if (!entry().runnable()) GTEST_SKIP() << entry().name << " needs a GPU; none present";
  auto backend = entry().factory();
  auto memory = entry().make_memory();
  const Cell base = base_cell();
  const bool mla = base.feature == Feature::kMlaDecode;
  // The base cell's head sizes, and V rows wider and narrower than K's where declared (their
  // own strides, nvfp4 block scales included).
  std::vector<std::pair<int, int>> heads = {{base.head_size, base.head_size_v}};
  if (!mla) {
    for (auto p : caps().asymmetric_head_sizes) heads.push_back(p);
    if (caps().any_head_size_v)
      for (auto p : {std::pair{64, 128}, std::pair{128, 64}})
        if (caps().head_sizes.accepts(p.first) && caps().head_sizes.accepts(p.second))
          heads.push_back(p);
  }
  int checked = 0;
  for (DType dt : caps().dtypes)
    for (KvCacheDType kvd : declared_kv_dtypes(caps(), dt))
      for (bool per_head : {false, true})
        for (auto [head, head_v] : heads) {
          const KvCacheDType rk = resolve_kv_dtype(kvd, dt);
          if (per_head && (!caps().per_head_quant_scales ||
                           (rk != KvCacheDType::kFp8E4M3 && rk != KvCacheDType::kFp8E5M2)))
            continue;
          LayerSpec spec = base.spec();
          spec.head_size = head;
          spec.head_size_v = head_v;
          spec.dtype = dt;
          spec.kv_cache_dtype = kvd;
          spec.kv_scale_granularity =
              per_head ? ScaleGranularity::kPerHead : default_granularity(rk);
          if (!invalid_reasons(caps(), spec, entry().device()).empty()) continue;
          WriteKvCase w;
          w.dtype = dt;
          w.kv_dtype = rk;
          w.per_head = per_head;
          w.mla = mla;
          w.num_kv_heads = mla ? 1 : 2;
          w.head_size = head;
          w.head_size_v = head_v;
          w.block_size = base.block_size;
          w.skip = 0.15;  // token 3 of 7 at least
          w.seed = seed_for(200000 + checked);
          const std::string problem = check_write_kv(*backend, *memory, w);
          EXPECT_TRUE(problem.empty()) << entry().name << " write_kv " << to_string(dt) << " -> "
                                       << (kvd == KvCacheDType::kAuto ? "auto" : to_string(rk))
                                       << (per_head ? " per-head" : "") << " heads " << head << "/"
                                       << head_v << ": " << problem;
          ++checked;
        }
  EXPECT_GT(checked, 0);
  std::cout << "conformance: " << entry().name << " " << checked << " write_kv formats checked"
            << std::endl;
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance, ::testing::ValuesIn(backends_under_test()),
                         [](const ::testing::TestParamInfo<BackendEntry>& info) {
                           return info.param.name;
                         });

// The generator itself: cells come from the declaration, so a declaration change changes them.
TEST(ConformanceGenerator, FollowsTheDeclaration) {
  Capabilities c;
  c.name = "TOY";
  c.dtypes = {DType::kBFloat16};
  c.kv_cache_dtypes = {KvCacheDType::kAuto, KvCacheDType::kFp8E4M3};
  c.head_sizes = {.sizes = {64, 80}};
  c.kernel_block_sizes = {BlockSizeEntry::multiple_of(16)};
  c.sinks = true;
  const auto cells = enumerate_cells(c);
  // bf16 x {auto, fp8} x {64, 80} x {16, 32} x {causal, sinks}
  EXPECT_EQ(cells.size(), 1u * 2 * 2 * 2 * 2);
  EXPECT_EQ(representative_block_sizes({BlockSizeEntry::multiple_of(1)}),
            (std::vector<int>{1, 16}));
  EXPECT_EQ(representative_block_sizes({BlockSizeEntry::exact(64)}), (std::vector<int>{64}));
  const auto any = representative_head_sizes(HeadSizeRule{});
  EXPECT_GE(any.size(), 4u);
  EXPECT_TRUE(std::any_of(any.begin(), any.end(), [](int h) { return h & (h - 1); }));
  c.alibi = true;
  EXPECT_EQ(enumerate_cells(c).size(), 1u * 2 * 2 * 2 * 4);  // + alibi, combined
  for (const Cell& cell : cells)
    EXPECT_TRUE(invalid_reasons(c, cell.spec(), device_from_name("cpu")).empty())
        << cell.describe();
}

// The comparison itself: NaN never passes, -inf rows must coincide, rounding noise passes.
TEST(ConformanceHarness, CompareIsStrictWhereItMustBe) {
  RunOutput want;
  want.total_q = want.num_heads = 1;
  want.head_size_v = 2;
  want.out = {0.5, -1.0};
  want.lse = {1.0};
  Tolerance t;
  t.atol = 1e-3;
  t.rtol = 1e-3;
  t.lse_atol = 1e-4;
  RunOutput got = want;
  got.out[0] += 5e-4;
  EXPECT_EQ(compare(got, want, t), "");
  got.out[1] = std::nan("");
  EXPECT_NE(compare(got, want, t), "");
  got = want;
  got.lse[0] = -std::numeric_limits<double>::infinity();
  EXPECT_NE(compare(got, want, t), "");
  want.lse[0] = got.lse[0];
  EXPECT_EQ(compare(got, want, t), "");
  got.lse[0] = std::nan("");
  EXPECT_NE(compare(got, want, t), "");
  got = want;
  got.written_outside = 1;
  EXPECT_NE(compare(got, want, t), "");
}

}  // namespace
}  // namespace attnkit::conformance
