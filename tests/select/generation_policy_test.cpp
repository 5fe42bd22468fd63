// Every rule of the kernel-generation policy, with fake generation lists and simulated devices.
#include "select/generation_policy.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attnkit/error.hpp"

namespace attnkit {
namespace {

using ::testing::HasSubstr;

DeviceInfo gpu(int major, int minor) {
  DeviceInfo d;
  d.platform = Platform::kCuda;
  d.name = "sim";
  d.cc = {major, minor};
  return d;
}

LayerSpec layer(int head = 128) {
  LayerSpec s;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.head_size = s.head_size_v = head;
  return s;
}

Capabilities base() {
  Capabilities c;
  c.name = "FLASH";
  c.platforms = {Platform::kCuda};
  c.sliding_window = c.logits_soft_cap = c.sinks = true;
  return c;
}

// Shaped like CUDA_FLASH: v2 SM80+ (wide head sizes), v3 SM90 only (64/128/256, no sinks),
// v4 SM100..103.
std::vector<KernelGeneration> gens(bool v3_built, bool v4_built) {
  Capabilities v2 = base();
  v2.min_compute_capability = 80;
  v2.head_sizes.sizes = {64, 80, 96, 128, 192, 256};
  Capabilities v3 = base();
  v3.min_compute_capability = v3.max_compute_capability = 90;
  v3.head_sizes.sizes = {64, 128, 256};
  v3.sinks = false;
  Capabilities v4 = base();
  v4.min_compute_capability = 100;
  v4.max_compute_capability = 103;
  v4.head_sizes.sizes = {64, 128, 192, 256};
  return {{"v2", true, v2}, {"v3", v3_built, v3}, {"v4", v4_built, v4}};
}

VariantChoice resolve(const std::vector<KernelGeneration>& g, const DeviceInfo& d,
                      const LayerSpec& s = layer(), std::optional<std::string> req = {}) {
  return resolve_generation(g, "FLASH", s, d, req);
}

TEST(GenerationPolicy, DefaultPerDevice) {
  const auto g = gens(true, true);
  EXPECT_EQ(g[default_generation(g, gpu(8, 0))].name, "v2");
  EXPECT_EQ(g[default_generation(g, gpu(8, 9))].name, "v2");
  EXPECT_EQ(g[default_generation(g, gpu(9, 0))].name, "v3");
  EXPECT_EQ(g[default_generation(g, gpu(10, 0))].name, "v4");
  EXPECT_EQ(g[default_generation(g, gpu(10, 3))].name, "v4");
  EXPECT_EQ(g[default_generation(g, gpu(12, 0))].name, "v2");
  DeviceInfo cpu;
  EXPECT_EQ(g[default_generation(g, cpu)].name, "v2");
  // With everything built, the default is taken without a warning.
  for (auto [maj, min, name] :
       {std::tuple{8, 0, "v2"}, {9, 0, "v3"}, {10, 0, "v4"}, {10, 3, "v4"}, {12, 0, "v2"}}) {
    VariantChoice v = resolve(g, gpu(maj, min));
    EXPECT_EQ(v.variant, name) << maj << "." << min;
    EXPECT_TRUE(v.warnings.empty());
  }
}

TEST(GenerationPolicy, ParsesRequestedNames) {
  const auto g = gens(true, true);
  EXPECT_EQ(parse_generation(g, "FLASH", "v3"), 1u);
  EXPECT_EQ(parse_generation(g, "FLASH", "V3"), 1u);
  EXPECT_EQ(parse_generation(g, "FLASH", "3"), 1u);
  EXPECT_EQ(parse_generation(g, "FLASH", "4"), 2u);
  EXPECT_EQ(parse_generation(g, "FLASH", "2"), 0u);
  try {
    parse_generation(g, "FLASH", "v5");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("'v5' is not a FLASH kernel generation"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("v2, v3, v4 (or 2, 3, 4)"));
  }
  EXPECT_THROW(resolve(g, gpu(9, 0), layer(), "fa3"), InvalidArgument);
}

TEST(GenerationPolicy, RequestedGenerationHonouredWhenValid) {
  const auto g = gens(true, true);
  VariantChoice v = resolve(g, gpu(9, 0), layer(), "v2");  // older than the default: fine
  EXPECT_EQ(v.variant, "v2");
  EXPECT_TRUE(v.warnings.empty());
  v = resolve(g, gpu(9, 0), layer(), "3");
  EXPECT_EQ(v.variant, "v3");
  EXPECT_TRUE(v.warnings.empty());
}

TEST(GenerationPolicy, Rule1ComputeCapability) {
  const auto g = gens(true, true);
  VariantChoice v = resolve(g, gpu(10, 0), layer(), "v3");
  EXPECT_EQ(v.variant, "v2");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_THAT(v.warnings[0].message,
              HasSubstr("v3 (Hopper) kernels (requested) need compute capability 9.0; device "
                        "has 10.0: using v2"));
  EXPECT_THAT(v.warnings[0].cause, HasSubstr("v3->v2"));
  v = resolve(g, gpu(8, 0), layer(), "v4");
  EXPECT_EQ(v.variant, "v2");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_THAT(v.warnings[0].message,
              HasSubstr("need compute capability 10.0-10.3; device has 8.0"));
  // v4 requested on SM90 goes to v3, the newest older generation that runs there.
  v = resolve(g, gpu(9, 0), layer(), "v4");
  EXPECT_EQ(v.variant, "v3");
  ASSERT_EQ(v.warnings.size(), 1u);
  // v4 on SM120 (outside 10.0-10.3).
  EXPECT_EQ(resolve(g, gpu(12, 0), layer(), "v4").variant, "v2");
}

TEST(GenerationPolicy, Rule2NotBuiltGoesToBestBuilt) {
  // A release with v2 built and v3, v4 declared only.
  const auto g = gens(false, false);
  VariantChoice v = resolve(g, gpu(9, 0));
  EXPECT_EQ(v.variant, "v2");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_THAT(v.warnings[0].message,
              HasSubstr("v3 (Hopper) kernels (preferred on this device) are not built in this "
                        "release: using v2"));
  EXPECT_THAT(v.warnings[0].cause, HasSubstr("not_built"));
  v = resolve(g, gpu(10, 0));
  EXPECT_EQ(v.variant, "v2");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_THAT(v.warnings[0].message, HasSubstr("v4 (Blackwell) kernels"));
  EXPECT_THAT(v.warnings[0].message, HasSubstr("not built"));
  // v4 not built on an SM90 device with v3 built: the best built generation is v3.
  const auto g3 = gens(true, false);
  v = resolve(g3, gpu(9, 0), layer(), "v4");
  // v4 fails rule 1 first on SM90 (outside its range), target is still v3.
  EXPECT_EQ(v.variant, "v3");
  // On B200 with v3 built, v4 unbuilt: v3 cannot run on 10.0, so v2; the warning says why v3 was
  // passed over as well.
  v = resolve(g3, gpu(10, 0));
  EXPECT_EQ(v.variant, "v2");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_THAT(v.warnings[0].message, HasSubstr("not built"));
  EXPECT_THAT(v.warnings[0].message,
              HasSubstr("also passed over: v3 (Hopper) (needs compute capability 9.0; device has "
                        "10.0)"));
  // Nothing between the preferred generation and the target: no such clause.
  EXPECT_THAT(resolve(g, gpu(9, 0)).warnings[0].message, ::testing::Not(HasSubstr("passed over")));
}

TEST(GenerationPolicy, Rule3LayerFeatureQuotesTheReasons) {
  const auto g = gens(true, true);
  LayerSpec s = layer(96);  // v3 has no 96
  VariantChoice v = resolve(g, gpu(9, 0), s);
  EXPECT_EQ(v.variant, "v2");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_THAT(v.warnings[0].message,
              HasSubstr("v3 (Hopper) kernels (preferred on this device) do not support this "
                        "layer (head_size not supported): using v2"));
  s = layer();
  s.sinks = true;
  v = resolve(g, gpu(9, 0), s, "v3");
  EXPECT_EQ(v.variant, "v2");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_THAT(v.warnings[0].message, HasSubstr("(requested) do not support this layer "
                                               "(attention sinks not supported)"));
  // Different reasons are different causes (each is logged once).
  EXPECT_NE(v.warnings[0].cause, resolve(g, gpu(9, 0), layer(96)).warnings[0].cause);
}

TEST(GenerationPolicy, RulesAreOrderedComputeCapabilityFirst) {
  // v3 unbuilt AND the layer has sinks AND the device is SM100: the cc rule names the cause.
  const auto g = gens(false, true);
  LayerSpec s = layer();
  s.sinks = true;
  VariantChoice v = resolve(g, gpu(10, 0), s, "v3");
  EXPECT_EQ(v.variant, "v2");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_THAT(v.warnings[0].message, HasSubstr("need compute capability 9.0"));
  // On SM90: not built comes before the layer's reasons.
  v = resolve(g, gpu(9, 0), s, "v3");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_THAT(v.warnings[0].message, HasSubstr("not built"));
}

TEST(GenerationPolicy, NoGenerationLeftThrowsUnsupportedWithEveryGeneration) {
  const auto g = gens(true, true);
  LayerSpec s = layer(512);  // no generation has 512
  try {
    resolve(g, gpu(9, 0), s);
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("no FLASH kernel generation can run"));
    EXPECT_EQ(e.reasons().size(), 3u);
    EXPECT_EQ(e.reasons().at("v4"),
              std::vector<std::string>{"needs compute capability 10.0-10.3; device has 9.0"});
    EXPECT_EQ(e.reasons().at("v2"), std::vector<std::string>{"head_size not supported"});
  }
  EXPECT_THROW(resolve_generation({}, "FLASH", layer(), gpu(9, 0), std::nullopt), Unsupported);
}

TEST(GenerationPolicy, FlippingBuiltChangesTheAnswer) {
  EXPECT_EQ(resolve(gens(false, false), gpu(9, 0)).variant, "v2");
  EXPECT_EQ(resolve(gens(true, false), gpu(9, 0)).variant, "v3");
  EXPECT_TRUE(resolve(gens(true, false), gpu(9, 0)).warnings.empty());
  EXPECT_EQ(resolve(gens(false, true), gpu(10, 3)).variant, "v4");
}

}  // namespace
}  // namespace attnkit
