// FlashAttention version policy of the vLLM stack (spec §5.1, §5.3).
#include <gtest/gtest.h>

#include "attnkit/error.hpp"
#include "stacks/vllm/vllm_stack.hpp"

namespace attnkit {
namespace {

FaVersion fa(const char* dev, FaVersionQuery q, VllmConfig cfg = {},
             std::optional<int> req = std::nullopt) {
  return vllm_flash_attn_version(device_from_name(dev), cfg, q, req);
}

bool has_cause(const FaVersion& v, const std::string& cause) {
  for (const auto& w : v.warnings)
    if (w.cause == cause) return true;
  return false;
}

TEST(VllmFaVersion, DefaultsByComputeCapability) {
  EXPECT_EQ(fa("a100", {128}).version, 2);
  EXPECT_EQ(fa("l40s", {128}).version, 2);
  EXPECT_EQ(fa("h100", {128}).version, 3);
  EXPECT_EQ(fa("b200", {128}).version, 4);
  EXPECT_EQ(fa("b300", {128}).version, 4);
  EXPECT_EQ(fa("rtx5090", {128}).version, 2);  // SM12x is not FA4 by default
  EXPECT_EQ(fa("xpu", {128}).version, 2);
  EXPECT_FALSE(fa("mi300x", {128}).version.has_value());  // ROCm passes no version
  EXPECT_TRUE(fa("b200", {128}).warnings.empty());
}

TEST(VllmFaVersion, FallbacksWhenNotBuilt) {
  VllmConfig no_fa3;
  no_fa3.fa3_built = false;
  EXPECT_EQ(fa("h100", {128}, no_fa3).version, 2);
  VllmConfig no_fa4;
  no_fa4.fa4_built = false;
  EXPECT_EQ(fa("b200", {128}, no_fa4).version, 2);
}

TEST(VllmFaVersion, AlibiForcesFa2) {
  const auto v = fa("h100", {128, 128, true});
  EXPECT_EQ(v.version, 2);
  EXPECT_TRUE(has_cause(v, "vllm:fa_alibi:3"));
  EXPECT_EQ(fa("b200", {128, 128, true}).version, 2);
  EXPECT_TRUE(fa("a100", {128, 128, true}).warnings.empty());  // already FA2
}

TEST(VllmFaVersion, HopperUpgradesToFa4) {
  auto v = fa("h100", {512});
  EXPECT_EQ(v.version, 4);
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("upgrading FlashAttention 3 -> 4"), std::string::npos);
  EXPECT_TRUE(v.warnings.empty());
  EXPECT_EQ(fa("h100", {64, 128, false, true}).version, 4);  // sinks with diff-KV
  EXPECT_EQ(fa("h100", {64, 64, false, true}).version, 3);   // sinks, same sizes
  EXPECT_EQ(fa("h100", {256}).version, 3);
  VllmConfig diffusion;
  diffusion.diffusion_model = true;
  EXPECT_EQ(fa("h100", {128}, diffusion).version, 4);
  VllmConfig no_fa4;
  no_fa4.fa4_built = false;
  EXPECT_EQ(fa("h100", {512}, no_fa4).version, 3);
}

TEST(VllmFaVersion, BlackwellHead256FallsBackToFa2) {
  // #52050: the SM100 2-CTA hd256 kernel rejects seqused_q/seqused_k, which decode always
  // passes; this holds with or without sliding window (the replaced rule).
  const auto v = fa("b200", {256});
  EXPECT_EQ(v.version, 2);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_EQ(v.warnings[0].cause, "vllm:fa4_hd256_blackwell");
  EXPECT_NE(v.warnings[0].message.find("temporarily disabled for head_size=256"),
            std::string::npos);
  EXPECT_EQ(fa("b300", {256}).version, 2);
}

TEST(VllmFaVersion, TmemRule) {
  auto v = fa("b200", {192, 192});
  EXPECT_EQ(v.version, 2);
  EXPECT_TRUE(has_cause(v, "vllm:fa4_tmem:192"));
  EXPECT_EQ(fa("b200", {192, 128}).version, 4);  // the MLA prefill shape
  EXPECT_EQ(fa("b200", {128}).version, 4);
  EXPECT_EQ(fa("b200", {512}).version, 2);
}

TEST(VllmFaVersion, RequestedVersion) {
  const auto v = fa("b200", {128}, {}, 3);
  EXPECT_EQ(v.version, 4);
  EXPECT_TRUE(has_cause(v, "vllm:fa3_on_blackwell"));
  VllmConfig no_fa4;
  no_fa4.fa4_built = false;
  EXPECT_EQ(fa("b200", {128}, no_fa4, 3).version, 2);
  EXPECT_EQ(fa("h100", {128}, {}, 2).version, 2);
  VllmConfig cfg;
  cfg.flash_attn_version = 2;
  EXPECT_EQ(fa("h100", {128}, cfg).version, 2);
  EXPECT_EQ(fa("h100", {128}, cfg, 3).version, 3);  // the request wins over the config
  EXPECT_THROW(fa("a100", {128}, {}, 3), Unsupported);
  EXPECT_THROW(fa("rtx5090", {128}, {}, 4), Unsupported);
}

TEST(VllmFaVersion, BatchInvariance) {
  VllmConfig cfg;
  cfg.batch_invariant = true;
  const auto v = fa("b200", {128}, cfg);
  EXPECT_EQ(v.version, 2);
  EXPECT_TRUE(has_cause(v, "vllm:fa4_batch_invariant"));
  EXPECT_EQ(fa("h100", {128}, cfg).version, 3);
}

TEST(VllmFaVersion, ParseVersion) {
  EXPECT_EQ(parse_flash_attn_version("2"), 2);
  EXPECT_EQ(parse_flash_attn_version("FA3"), 3);
  EXPECT_EQ(parse_flash_attn_version("fa4"), 4);
  EXPECT_EQ(parse_flash_attn_version("v3"), 3);
  EXPECT_THROW(parse_flash_attn_version("5"), InvalidArgument);
  EXPECT_THROW(parse_flash_attn_version("FA"), InvalidArgument);
}

TEST(VllmFaVersion, Fp8KvOnlyWithFa3OnSm90OrFa4OnSm100) {
  const VllmConfig cfg;
  EXPECT_TRUE(vllm_flash_attn_supports_fp8(device_from_name("h100"), cfg, 128));
  EXPECT_TRUE(vllm_flash_attn_supports_fp8(device_from_name("b200"), cfg, 128));
  EXPECT_FALSE(vllm_flash_attn_supports_fp8(device_from_name("b200"), cfg, 256));  // FA2
  EXPECT_FALSE(vllm_flash_attn_supports_fp8(device_from_name("a100"), cfg, 128));
  EXPECT_FALSE(vllm_flash_attn_supports_fp8(device_from_name("rtx5090"), cfg, 128));
  EXPECT_TRUE(vllm_flash_attn_supports_fp8(device_from_name("xpu"), cfg, 128));
}

}  // namespace
}  // namespace attnkit
