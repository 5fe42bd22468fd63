// The native catalog: its backends, per-platform priorities, and the CUDA_FLASH generation
// policy wired to the real generation list, on the device presets.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attnkit/error.hpp"
#include "attnkit/log.hpp"
#include "attnkit/selector.hpp"
#include "backends/cuda_flash/capabilities.hpp"
#include "stacks/stacks.hpp"

namespace attnkit {
namespace {

using ::testing::HasSubstr;

LayerSpec llama() {
  LayerSpec s;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.head_size = s.head_size_v = 128;
  return s;
}

LayerSpec deepseek() {
  LayerSpec s;
  s.num_heads = 128;
  s.num_kv_heads = 1;
  s.mla = MlaDims{512, 128, 64, 128, 1536};
  s.head_size = 576;
  s.head_size_v = 512;
  return s;
}

bool built(const std::string& gen) {
  for (const auto& g : cuda_flash_generations())
    if (g.name == gen) return g.built;
  return false;
}

class NativeCatalog : public ::testing::Test {
 protected:
  void SetUp() override { reset_warn_once(); }
  ScopedLogCapture quiet;
  const Catalog& cat = native_catalog();
};

TEST_F(NativeCatalog, DeclaresTheFourBackends) {
  EXPECT_EQ(cat.name, "native");
  EXPECT_EQ(cat.names(),
            (std::vector<std::string>{"CPU_REFERENCE", "CPU_FLASH", "CUDA_FLASH", "CUDA_MLA"}));
  for (const auto& b : cat.backends) EXPECT_FALSE(b.description.empty()) << b.name();
  EXPECT_TRUE(cat.find("cuda_flash")->resolve_variant);
  EXPECT_EQ(cat.find("CUDA_FLASH")->generations.size(), cuda_flash_generations().size());
  EXPECT_EQ(&catalog_for_stack("NATIVE"), &cat);
  EXPECT_THROW(catalog_for_stack("tgi"), InvalidArgument);
}

TEST_F(NativeCatalog, Priorities) {
  EXPECT_EQ(cat.priorities(llama(), device_from_name("cpu")),
            (std::vector<std::string>{"CPU_FLASH", "CPU_REFERENCE"}));
  EXPECT_EQ(cat.priorities(llama(), device_from_name("h100")),
            std::vector<std::string>{"CUDA_FLASH"});
  EXPECT_EQ(cat.priorities(deepseek(), device_from_name("h100")),
            std::vector<std::string>{"CUDA_MLA"});
  EXPECT_TRUE(cat.priorities(llama(), device_from_name("mi300x")).empty());
  EXPECT_TRUE(cat.priorities(llama(), device_from_name("xpu")).empty());
}

TEST_F(NativeCatalog, CpuPicksFlashThenReference) {
  Selector s(cat, device_from_name("cpu"));
  EXPECT_EQ(s.select(llama()).backend, "CPU_FLASH");
  LayerSpec odd = llama();
  odd.head_size = odd.head_size_v = 20;  // CPU_FLASH needs multiples of 16
  const Selection& sel = s.select(odd);
  EXPECT_EQ(sel.backend, "CPU_REFERENCE");
  ASSERT_EQ(sel.rejected.size(), 1u);
  EXPECT_THAT(sel.rejected[0].reasons, ::testing::Contains("head_size not supported"));
  EXPECT_EQ(s.select(deepseek()).backend, "CPU_FLASH");
}

TEST_F(NativeCatalog, CudaGenerationPerDevice) {
  struct Case {
    const char* device;
    const char* preferred;
  };
  for (const Case& c :
       {Case{"a100", "v2"}, Case{"l40s", "v2"}, Case{"h100", "v3"}, Case{"h200", "v3"},
        Case{"b200", "v4"}, Case{"b300", "v4"}, Case{"rtx5090", "v2"}}) {
    Selector s(cat, device_from_name(c.device));
    const Selection& sel = s.select(llama());
    EXPECT_EQ(sel.backend, "CUDA_FLASH") << c.device;
    // Not built in this release -> the best built generation that runs there (v2 everywhere
    // but SM90, where a built v3 is used).
    const std::string expected = built(c.preferred) ? c.preferred : "v2";
    EXPECT_EQ(sel.variant, expected) << c.device;
    if (expected == c.preferred) {
      EXPECT_TRUE(sel.warnings.empty()) << c.device;
    } else {
      ASSERT_EQ(sel.warnings.size(), 1u) << c.device;
      EXPECT_THAT(sel.warnings[0].message, HasSubstr("not built in this release")) << c.device;
    }
  }
}

TEST_F(NativeCatalog, RequestedVariant) {
  Selector b200(cat, device_from_name("b200"), {.variant = "3"});
  const Selection& sel = b200.select(llama());
  EXPECT_EQ(sel.variant, "v2");
  ASSERT_EQ(sel.warnings.size(), 1u);
  EXPECT_THAT(sel.warnings[0].message,
              HasSubstr("v3 (Hopper) kernels (requested) need compute capability 9.0; device has "
                        "10.0: using v2"));
  Selector a100(cat, device_from_name("a100"), {.variant = "v2"});
  EXPECT_EQ(a100.select(llama()).variant, "v2");
  EXPECT_TRUE(a100.select(llama()).warnings.empty());
}

// A variant no backend of the stack has is refused when the selector is made, on every device
// (before, only where CUDA_FLASH was picked: on a CPU "v9" was "ignored" with a warning). A known
// one the picked backend lacks stays a warning.
TEST_F(NativeCatalog, UnknownVariantIsRefusedOnEveryDevice) {
  for (const char* dev : {"h100", "cpu", "cpu-amx", "mi300x"}) {
    for (const char* v : {"fa3", "v9", "7"}) {
      try {
        Selector bad(cat, device_from_name(dev), {.variant = v});
        ADD_FAILURE() << dev << " " << v << ": expected InvalidArgument";
      } catch (const InvalidArgument& e) {
        EXPECT_THAT(e.what(), HasSubstr(fmt::format("variant '{}' is not a CUDA_FLASH kernel "
                                                    "generation; expected one of v2, v3, v4",
                                                    v)));
      }
    }
  }
  Selector cpu(cat, device_from_name("cpu"), {.variant = "v3"});
  const Selection& sel = cpu.select(llama());
  ASSERT_EQ(sel.warnings.size(), 1u);
  EXPECT_THAT(sel.warnings[0].message, HasSubstr("variant 'v3' ignored"));
}

TEST_F(NativeCatalog, MlaOnCuda) {
  Selector s(cat, device_from_name("h100"));
  const Selection& sel = s.select(deepseek());
  EXPECT_EQ(sel.backend, "CUDA_MLA");
  EXPECT_EQ(sel.variant, "");
  // plan_details reports the MLA prefill path (decompressed K/V through the flash kernels).
  ASSERT_TRUE(cat.plan_details);
  auto details = cat.plan_details(deepseek(), s.device(), {}, sel);
  ASSERT_EQ(details.size(), 1u);
  EXPECT_EQ(details[0].first, "MLA prefill");
  EXPECT_THAT(details[0].second, HasSubstr("qk 192 / v 128"));
  // v3, preferred on SM90, runs the 192/128 prefill on its Hopper form; an A100 runs v2.
  EXPECT_EQ(details[0].second, "CUDA_FLASH v3 (qk 192 / v 128)");
  Selector a100(cat, device_from_name("a100"));
  details = cat.plan_details(deepseek(), a100.device(), {}, a100.select(deepseek()));
  ASSERT_EQ(details.size(), 1u);
  EXPECT_EQ(details[0].second, "CUDA_FLASH v2 (qk 192 / v 128)");
  EXPECT_TRUE(cat.plan_details(llama(), s.device(), {}, s.select(llama())).empty());
}

TEST_F(NativeCatalog, RocmAndXpuHaveNoNativeBackend) {
  for (const char* dev : {"mi300x", "xpu"}) {
    Selector s(cat, device_from_name(dev));
    try {
      s.select(llama());
      FAIL() << dev;
    } catch (const Unsupported& e) {
      const std::string platform = dev == std::string("xpu") ? "xpu" : "rocm";
      EXPECT_THAT(std::string(e.what()), HasSubstr("has no backend for platform " + platform));
      ASSERT_EQ(e.reasons().size(), 4u);
      for (const auto& [name, reasons] : e.reasons())
        EXPECT_THAT(reasons, ::testing::Contains("platform " + platform + " not supported"))
            << name;
    }
  }
}

TEST_F(NativeCatalog, ExplicitCudaFlashOnCpuNamesTheBackendsThatWouldWork) {
  Selector s(cat, device_from_name("cpu"), {.backend = "cuda_flash"});
  try {
    s.select(llama());
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("platform cpu not supported"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("[CPU_FLASH, CPU_REFERENCE]"));
  }
}

// What selection accepts, the resolved generation must run: the generation is built and its
// own capabilities accept the layer (the FA4 head-dim-256 failure class).
TEST_F(NativeCatalog, SelectedGenerationAlwaysAcceptsTheLayer) {
  std::vector<LayerSpec> layers;
  for (int head : {64, 80, 96, 128, 160, 192, 224, 256})
    for (bool window : {false, true})
      for (bool sinks : {false, true}) {
        LayerSpec l = llama();
        l.head_size = l.head_size_v = head;
        if (window) l.sliding_window = 4096;
        l.sinks = sinks;
        layers.push_back(l);
        l.kv_cache_dtype = KvCacheDType::kFp8E4M3;
        layers.push_back(l);
      }
  for (const auto& dev : {"a100", "l40s", "h100", "h200", "b200", "b300", "rtx5090"}) {
    for (const char* variant : {"", "v2", "v3", "v4"}) {
      SelectOptions o;
      if (*variant) o.variant = variant;
      Selector s(cat, device_from_name(dev), o);
      for (const auto& l : layers) {
        const Selection* sel = nullptr;
        try {
          sel = &s.select(l);
        } catch (const Unsupported&) {
          continue;  // nothing valid: fine, as long as it is said up front
        }
        const KernelGeneration* g = nullptr;
        for (const auto& x : cuda_flash_generations())
          if (x.name == sel->variant) g = &x;
        ASSERT_NE(g, nullptr) << sel->variant;
        EXPECT_TRUE(g->built) << dev << " " << l.signature();
        EXPECT_TRUE(invalid_reasons(g->caps, l, s.device()).empty())
            << dev << " " << variant << " " << l.signature();
      }
    }
  }
}

}  // namespace
}  // namespace attnkit
