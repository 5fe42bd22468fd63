// The selection engine against fake catalogs and simulated devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "attnkit/error.hpp"
#include "attnkit/log.hpp"
#include "attnkit/selector.hpp"

namespace attnkit {
namespace {

using ::testing::HasSubstr;

LayerSpec standard(int head = 128) {
  LayerSpec s;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.head_size = s.head_size_v = head;
  s.dtype = DType::kBFloat16;
  return s;
}

DeviceInfo gpu(int major, int minor) {
  DeviceInfo d;
  d.platform = Platform::kCuda;
  d.name = "sim";
  d.cc = {major, minor};
  return d;
}

DeviceInfo cpu() {
  DeviceInfo d;
  d.platform = Platform::kCpu;
  d.name = "simcpu";
  return d;
}

Capabilities caps(std::string name, std::vector<Platform> platforms) {
  Capabilities c;
  c.name = std::move(name);
  c.platforms = std::move(platforms);
  return c;
}

// FAST: cuda SM90 only, head sizes 64/128, block multiples of 64.
// WIDE: cuda SM80+, any head size, sliding window, blocks multiples of 16.
// SLOW: cpu and cuda, everything.
Catalog fake_catalog() {
  Catalog c;
  c.name = "fake";
  Capabilities fast = caps("FAST", {Platform::kCuda});
  fast.min_compute_capability = fast.max_compute_capability = 90;
  fast.head_sizes.sizes = {64, 128};
  fast.kernel_block_sizes = {BlockSizeEntry::multiple_of(64)};
  Capabilities wide = caps("WIDE", {Platform::kCuda});
  wide.min_compute_capability = 80;
  wide.sliding_window = true;
  wide.kernel_block_sizes = {BlockSizeEntry::multiple_of(16)};
  Capabilities slow = caps("SLOW", {Platform::kCpu, Platform::kCuda});
  slow.sliding_window = slow.sinks = slow.alibi = slow.logits_soft_cap = slow.non_causal = true;
  slow.dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  c.backends = {{fast, nullptr, "fast"}, {wide, nullptr, "wide"}, {slow, nullptr, "slow"}};
  c.priorities = [](const LayerSpec&, const DeviceInfo& d) -> std::vector<std::string> {
    if (d.platform == Platform::kCuda) return {"FAST", "WIDE", "SLOW"};
    if (d.platform == Platform::kCpu) return {"SLOW"};
    return {};
  };
  return c;
}

class SelectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reset_warn_once();
    unsetenv("ATTNKIT_ATTENTION_BACKEND");
  }
  void TearDown() override { unsetenv("ATTNKIT_ATTENTION_BACKEND"); }
  ScopedLogCapture quiet;  // keeps the selector's log lines out of the test output
  Catalog catalog = fake_catalog();
};

TEST_F(SelectorTest, FirstValidInPriorityOrderWins) {
  Selector s(catalog, gpu(9, 0));
  const Selection& sel = s.select(standard());
  EXPECT_EQ(sel.backend, "FAST");
  EXPECT_TRUE(sel.rejected.empty());
  EXPECT_EQ(sel.candidates, (std::vector<std::string>{"FAST", "WIDE", "SLOW"}));
  EXPECT_FALSE(sel.explicit_choice);
}

TEST_F(SelectorTest, RejectedHigherPrioritiesAreRecordedInOrder) {
  Selector s(catalog, gpu(8, 0));
  LayerSpec l = standard(96);
  const Selection& sel = s.select(l);
  EXPECT_EQ(sel.backend, "WIDE");
  ASSERT_EQ(sel.rejected.size(), 1u);
  EXPECT_EQ(sel.rejected[0].backend, "FAST");
  EXPECT_EQ(
      sel.rejected[0].reasons,
      (std::vector<std::string>{"head_size not supported", "compute capability not supported"}));
  l.sliding_window = 4096;
  l.sinks = true;
  EXPECT_EQ(s.select(l).backend, "SLOW");
  EXPECT_EQ(s.select(l).rejected.size(), 2u);
}

TEST_F(SelectorTest, ExplicitChoiceValidAndCaseInsensitive) {
  Selector s(catalog, gpu(9, 0), {.backend = "slow"});
  const Selection& sel = s.select(standard());
  EXPECT_EQ(sel.backend, "SLOW");
  EXPECT_TRUE(sel.explicit_choice);
}

TEST_F(SelectorTest, ExplicitChoiceInvalidListsReasonsAndWorkingBackends) {
  Selector s(catalog, gpu(8, 0), {.backend = "Fast"});
  try {
    s.select(standard());
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("Selected backend FAST is not valid"));
    EXPECT_THAT(what, HasSubstr("compute capability not supported"));
    EXPECT_THAT(what, HasSubstr("Backends that would work for this layer: [WIDE, SLOW]"));
    ASSERT_EQ(e.reasons().count("FAST"), 1u);
    EXPECT_EQ(e.reasons().at("FAST"), std::vector<std::string>{"compute capability not supported"});
  }
}

TEST_F(SelectorTest, WouldWorkListFollowsThePriorityOrder) {
  Catalog c = catalog;
  c.priorities = [](const LayerSpec&, const DeviceInfo&) {
    return std::vector<std::string>{"SLOW", "WIDE"};
  };
  Selector s(c, gpu(8, 0), {.backend = "FAST"});
  try {
    s.select(standard());
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("would work for this layer: [SLOW, WIDE]"));
  }
}

TEST_F(SelectorTest, ExplicitChoiceWithNothingValidSaysNone) {
  Selector s(catalog, cpu(), {.backend = "FAST"});
  LayerSpec l = standard();
  l.dtype = DType::kFloat32;
  l.alibi = true;
  l.mla = MlaDims{512, 128, 64, 128};
  EXPECT_THROW(
      {
        try {
          s.select(l);
        } catch (const Unsupported& e) {
          EXPECT_THAT(std::string(e.what()), HasSubstr("would work for this layer: [none]"));
          throw;
        }
      },
      Unsupported);
}

TEST_F(SelectorTest, UnknownNameListsValidNames) {
  try {
    Selector s(catalog, gpu(9, 0), {.backend = "FLASHINFER"});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("'FLASHINFER' is unknown"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("FAST, WIDE, SLOW"));
  }
}

TEST_F(SelectorTest, AutoMeansAutomatic) {
  Selector s(catalog, gpu(9, 0), {.backend = "AUTO"});
  EXPECT_EQ(s.select(standard()).backend, "FAST");
  EXPECT_FALSE(s.select(standard()).explicit_choice);
}

TEST_F(SelectorTest, RequestedBackendFlagWinsOverEnvironment) {
  EXPECT_EQ(resolve_requested_backend(std::nullopt), std::nullopt);
  setenv("ATTNKIT_ATTENTION_BACKEND", "WIDE", 1);
  EXPECT_EQ(resolve_requested_backend(std::nullopt), "WIDE");
  EXPECT_EQ(resolve_requested_backend(std::string("slow")), "slow");
  EXPECT_EQ(resolve_requested_backend(std::string("auto")), std::nullopt);
  setenv("ATTNKIT_ATTENTION_BACKEND", "Auto", 1);
  EXPECT_EQ(resolve_requested_backend(std::nullopt), std::nullopt);
  setenv("ATTNKIT_ATTENTION_BACKEND", "", 1);
  EXPECT_EQ(resolve_requested_backend(std::nullopt), std::nullopt);
}

TEST_F(SelectorTest, EnvironmentChoiceIsValidatedLikeTheFlag) {
  setenv("ATTNKIT_ATTENTION_BACKEND", "wide", 1);
  Selector s(catalog, gpu(9, 0), {.backend = resolve_requested_backend(std::nullopt)});
  const Selection& sel = s.select(standard());
  EXPECT_EQ(sel.backend, "WIDE");
  EXPECT_TRUE(sel.explicit_choice);
  setenv("ATTNKIT_ATTENTION_BACKEND", "nope", 1);
  EXPECT_THROW(Selector(catalog, gpu(9, 0), {.backend = resolve_requested_backend(std::nullopt)}),
               InvalidArgument);
}

TEST_F(SelectorTest, NoneValidListsEveryBackendWithReasons) {
  Selector s(catalog, cpu());
  LayerSpec l = standard();
  l.mla = MlaDims{512, 128, 64, 128};
  try {
    s.select(l);
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("No valid attention backend found"));
    EXPECT_THAT(what, HasSubstr("FAST: [MLA not supported, platform cpu not supported]"));
    EXPECT_THAT(what, HasSubstr("platform cpu not supported"));
    EXPECT_THAT(what, HasSubstr("SLOW: [MLA not supported]"));
    ASSERT_EQ(e.reasons().size(), 3u);
    EXPECT_EQ(e.reasons().at("SLOW"), std::vector<std::string>{"MLA not supported"});
    EXPECT_EQ(e.reasons().at("WIDE"),
              (std::vector<std::string>{"MLA not supported", "platform cpu not supported"}));
  }
}

// A dtype that no backend of the priority list runs (configs often say float32, which no GPU
// kernel runs): the error names the dtypes that would.
TEST_F(SelectorTest, DtypeNoBackendRunsNamesTheDtypesThatWould) {
  for (auto& b : catalog.backends) std::erase(b.caps.dtypes, DType::kFloat32);
  Selector s(catalog, gpu(9, 0));
  LayerSpec l = standard();
  l.dtype = DType::kFloat32;
  try {
    s.select(l);
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("No backend of the cuda priority list runs float32; they run float16, "
                          "bfloat16: choose one of those dtypes."));
  }
  // Where some backend runs the dtype, the reasons stand alone.
  l = standard();
  l.mla = MlaDims{512, 128, 64, 128};
  try {
    Selector(catalog, cpu()).select(l);
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::Not(HasSubstr("priority list runs")));
  }
}

TEST_F(SelectorTest, EmptyPriorityListSaysThePlatformHasNoBackend) {
  DeviceInfo rocm = gpu(9, 4);
  rocm.platform = Platform::kRocm;
  Selector s(catalog, rocm);
  try {
    s.select(standard());
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("the fake stack has no backend for platform rocm"));
    // The compute-capability range of a CUDA backend is not judged on ROCm.
    EXPECT_EQ(e.reasons().at("FAST"), (std::vector<std::string>{"platform rocm not supported"}));
  }
}

TEST_F(SelectorTest, ValidBackendOutsideThePriorityListIsExplained) {
  Catalog c = catalog;
  c.priorities = [](const LayerSpec&, const DeviceInfo&) {
    return std::vector<std::string>{"FAST"};
  };
  Selector s(c, gpu(8, 0));
  try {
    s.select(standard());
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_EQ(e.reasons().at("WIDE"),
              std::vector<std::string>{"not in the cuda priority list (choose it explicitly)"});
  }
}

TEST_F(SelectorTest, PriorityListNamingAnUndeclaredBackendIsAnError) {
  Catalog c = catalog;
  c.priorities = [](const LayerSpec&, const DeviceInfo&) {
    return std::vector<std::string>{"GHOST", "SLOW"};
  };
  Selector s(c, gpu(9, 0));
  EXPECT_THROW(s.select(standard()), Error);
}

TEST_F(SelectorTest, PinnedBlockSizeWarningOnlyWhenItWasTheOnlyReason) {
  ScopedLogCapture cap;
  Selector s(catalog, gpu(9, 0));
  LayerSpec l = standard();
  l.block_size = 16;  // FAST needs multiples of 64
  const Selection& sel = s.select(l);
  EXPECT_EQ(sel.backend, "WIDE");
  ASSERT_EQ(sel.warnings.size(), 1u);
  EXPECT_THAT(sel.warnings[0].message, HasSubstr("--block-size 16 precluded higher-priority"));
  EXPECT_THAT(sel.warnings[0].message, HasSubstr("FAST"));
  EXPECT_THAT(sel.warnings[0].message, HasSubstr("Using WIDE instead"));
  EXPECT_THAT(cap.text(), HasSubstr("WARNING: --block-size 16 precluded"));

  // FAST also rejects head size 96: the block size was not the only reason, so no warning.
  LayerSpec l2 = standard(96);
  l2.block_size = 16;
  EXPECT_EQ(s.select(l2).backend, "WIDE");
  EXPECT_TRUE(s.select(l2).warnings.empty());

  // A supported pinned size: no warning either.
  LayerSpec l3 = standard();
  l3.block_size = 128;
  EXPECT_EQ(s.select(l3).backend, "FAST");
  EXPECT_TRUE(s.select(l3).warnings.empty());
}

TEST_F(SelectorTest, WarningsAreLoggedOncePerCause) {
  ScopedLogCapture cap;
  LayerSpec a = standard();
  a.block_size = 16;
  LayerSpec b = a;
  b.num_heads = 64;  // another signature, same cause
  Selector s(catalog, gpu(9, 0));
  s.select(a);
  s.select(b);
  Selector s2(catalog, gpu(9, 0));
  s2.select(a);
  const std::string& t = cap.text();
  size_t n = 0;
  for (size_t p = t.find("precluded"); p != std::string::npos; p = t.find("precluded", p + 1)) ++n;
  EXPECT_EQ(n, 1u) << t;
}

TEST_F(SelectorTest, OneLogLinePerSignature) {
  ScopedLogCapture cap;
  Selector s(catalog, gpu(9, 0));
  LayerSpec a = standard();
  for (int i = 0; i < 5; ++i) {
    a.layer_index = i;
    s.select(a);
  }
  LayerSpec b = standard();
  b.sliding_window = 4096;
  s.select(b);
  s.select(b);
  const std::string& t = cap.text();
  const std::string line_a =
      "Using FAST attention backend out of potential backends: [FAST, WIDE, SLOW]";
  const std::string line_b =
      "Using WIDE attention backend out of potential backends: [FAST, WIDE, SLOW]";
  EXPECT_EQ(t.find(line_a), t.rfind(line_a)) << t;
  EXPECT_NE(t.find(line_a), std::string::npos) << t;
  EXPECT_EQ(t.find(line_b), t.rfind(line_b)) << t;
  EXPECT_NE(t.find(line_b), std::string::npos) << t;
}

TEST_F(SelectorTest, CacheReturnsTheSameSelectionPerSignature) {
  int calls = 0;
  Catalog c = catalog;
  c.backends[0].resolve_variant = [&calls](const LayerSpec&, const DeviceInfo&,
                                           const SelectOptions&) {
    ++calls;
    return VariantChoice{"x", {}};
  };
  Selector s(c, gpu(9, 0));
  LayerSpec a = standard();
  const Selection* first = &s.select(a);
  a.layer_index = 7;  // not part of the signature
  EXPECT_EQ(&s.select(a), first);
  EXPECT_EQ(calls, 1);
  a.num_kv_heads = 4;
  EXPECT_NE(&s.select(a), first);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(first->variant, "x");
}

TEST_F(SelectorTest, VariantWarningsAreCollectedAndLogged) {
  ScopedLogCapture cap;
  Catalog c = catalog;
  c.backends[0].resolve_variant = [](const LayerSpec&, const DeviceInfo&, const SelectOptions& o) {
    return VariantChoice{"v1", {{"down:" + o.variant.value_or(""), "downgraded for a reason"}}};
  };
  Selector s(c, gpu(9, 0), {.variant = "v9"});
  const Selection& sel = s.select(standard());
  EXPECT_EQ(sel.variant, "v1");
  ASSERT_EQ(sel.warnings.size(), 1u);
  EXPECT_EQ(sel.warnings[0].cause, "down:v9");
  EXPECT_THAT(cap.text(), HasSubstr("WARNING: downgraded for a reason"));
}

TEST_F(SelectorTest, VariantForABackendWithoutVariantsWarns) {
  Selector s(catalog, gpu(9, 0), {.variant = "v3"});
  const Selection& sel = s.select(standard());
  EXPECT_EQ(sel.variant, "");
  ASSERT_EQ(sel.warnings.size(), 1u);
  EXPECT_THAT(sel.warnings[0].message, HasSubstr("variant 'v3' ignored"));
}

TEST_F(SelectorTest, EvaluateAllCoversTheWholeCatalogInOrder) {
  Selector s(catalog, cpu());
  auto all = s.evaluate_all(standard());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].backend, "FAST");
  EXPECT_EQ(all[2].backend, "SLOW");
  EXPECT_TRUE(all[2].reasons.empty());
  EXPECT_EQ(all[1].reasons, std::vector<std::string>{"platform cpu not supported"});
}

TEST_F(SelectorTest, CatalogFindIsCaseInsensitive) {
  EXPECT_NE(catalog.find("wide"), nullptr);
  EXPECT_EQ(catalog.find("wide")->name(), "WIDE");
  EXPECT_EQ(catalog.find("WIDER"), nullptr);
  EXPECT_EQ(catalog.names(), (std::vector<std::string>{"FAST", "WIDE", "SLOW"}));
}

}  // namespace
}  // namespace attnkit
