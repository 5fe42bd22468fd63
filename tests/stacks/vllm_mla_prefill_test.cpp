// vLLM's MLA prefill selector (spec §6; §8 test_mla_prefill_selector.py).
#include <gtest/gtest.h>

#include "attnkit/error.hpp"
#include "stacks/vllm/vllm_stack.hpp"
#include "vllm_test_layers.hpp"

namespace attnkit {
namespace {

using namespace vllm_test;

MlaPrefillChoice prefill(const LayerSpec& s, const char* dev, VllmConfig cfg = {}) {
  return select_vllm_mla_prefill(s, device_from_name(dev), cfg);
}

VllmConfig forced(const char* backend) {
  VllmConfig c;
  c.mla_prefill_backend = backend;
  return c;
}

std::string error_of(const LayerSpec& s, const char* dev, VllmConfig cfg) {
  try {
    prefill(s, dev, cfg);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(VllmMlaPrefill, HopperPicksFlashAttnForEveryModel) {
  EXPECT_EQ(prefill(deepseek_v3(), "h100").backend, "FLASH_ATTN");
  EXPECT_EQ(prefill(glm5(), "h100").backend, "FLASH_ATTN");
  EXPECT_EQ(prefill(mla(64, 64, 128), "h100").backend, "FLASH_ATTN");  // Mistral-S4
  EXPECT_EQ(prefill(deepseek_v3(), "h100").fa_version, 3);
}

TEST(VllmMlaPrefill, BlackwellOrderDependsOnDims) {
  const auto glm = prefill(glm5(), "b200");
  EXPECT_EQ(glm.backend, "TRTLLM_RAGGED");
  EXPECT_TRUE(glm.rejected.empty());
  const auto ds = prefill(deepseek_v3(), "b200");
  EXPECT_EQ(ds.backend, "FLASH_ATTN");
  EXPECT_EQ(ds.fa_version, 4);  // 192/128 is the TMEM rule's exemption
  EXPECT_FALSE(ds.v_zero_padded);
  // Without FlashInfer, GLM falls to FLASH_ATTN, which resolves head 256 to FA2 on Blackwell.
  VllmConfig no_fi;
  no_fi.flashinfer_available = false;
  const auto fallback = prefill(glm5(), "b200", no_fi);
  EXPECT_EQ(fallback.backend, "FLASH_ATTN");
  EXPECT_EQ(fallback.fa_version, 2);
  ASSERT_EQ(fallback.rejected.size(), 1u);
  EXPECT_EQ(fallback.rejected[0].backend, "TRTLLM_RAGGED");
  EXPECT_TRUE(contains(fallback.rejected[0].reasons, "required dependencies not available"));
  EXPECT_EQ(fallback.warnings.back().cause, "vllm:fa4_hd256_blackwell");
}

TEST(VllmMlaPrefill, NoDeviceCapability) {
  EXPECT_EQ(prefill(deepseek_v3(), "cpu").backend, "CPU_NATIVE");
  EXPECT_EQ(prefill(deepseek_v3(), "xpu").backend, "FLASH_ATTN");
  EXPECT_EQ(prefill(deepseek_v3(), "a100").backend, "FLASH_ATTN");
}

TEST(VllmMlaPrefill, RocmPrefersAiterWithFlashAttnFallback) {
  EXPECT_EQ(prefill(deepseek_v3(), "mi300x").backend, "FLASH_ATTN");
  VllmConfig aiter;
  aiter.rocm_aiter = true;
  EXPECT_EQ(prefill(deepseek_v3(), "mi300x", aiter).backend, "ROCM_AITER_FA");
  aiter.rocm_aiter_installed = false;
  EXPECT_EQ(prefill(deepseek_v3(), "mi300x", aiter).backend, "FLASH_ATTN");
}

TEST(VllmMlaPrefill, DimensionValidation) {
  EXPECT_EQ(prefill(deepseek_v3(), "b200", forced("FLASHINFER")).backend, "FLASHINFER");
  const std::string err = error_of(mla(64, 64, 128), "b200", forced("FLASHINFER"));
  EXPECT_NE(err.find("Selected MLA prefill backend FLASHINFER is not valid for this "
                     "configuration. Reason: ["),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("supported MLA dimensions"), std::string::npos) << err;
  EXPECT_EQ(prefill(glm5(), "b200", forced("TRTLLM_RAGGED")).backend, "TRTLLM_RAGGED");
  EXPECT_EQ(prefill(deepseek_v3(), "b200", forced("trtllm_ragged")).backend, "TRTLLM_RAGGED");
}

TEST(VllmMlaPrefill, ExplicitInvalidAndMissingDependency) {
  const std::string cc = error_of(deepseek_v3(), "h100", forced("TRTLLM_RAGGED"));
  EXPECT_NE(cc.find("is not valid"), std::string::npos);
  EXPECT_NE(cc.find("compute capability 9.0 not supported"), std::string::npos) << cc;
  const std::string dep = error_of(deepseek_v3(), "b200", forced("TOKENSPEED_MLA"));
  EXPECT_NE(dep.find("is not valid"), std::string::npos);
  EXPECT_NE(dep.find("required dependencies not available"), std::string::npos) << dep;
  VllmConfig ts = forced("TOKENSPEED_MLA");
  ts.tokenspeed_mla_available = true;
  EXPECT_EQ(prefill(deepseek_v3(), "b200", ts).backend, "TOKENSPEED_MLA");
  VllmConfig autoc = forced("Auto");
  EXPECT_EQ(prefill(glm5(), "b200", autoc).backend, "TRTLLM_RAGGED");
}

TEST(VllmMlaPrefill, AllInvalid) {
  LayerSpec odd = mla(96, 32, 96);
  const std::string err = error_of(odd, "h100", {});
  EXPECT_NE(err.find("No valid MLA prefill backend found with MLAPrefillSelectorConfig("),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("qk_nope_head_dim=96"), std::string::npos) << err;
  EXPECT_NE(err.find("FLASH_ATTN: [Model does not have supported MLA dimensions (got (96, 32, "
                     "96)"),
            std::string::npos)
      << err;
  LayerSpec f32 = deepseek_v3();
  f32.dtype = DType::kFloat32;
  EXPECT_NE(error_of(f32, "h100", {}).find("dtype float32 not supported"), std::string::npos);
}

TEST(VllmMlaPrefill, UnknownName) {
  try {
    prefill(deepseek_v3(), "b200", forced("NOPE"));
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "Unknown MLA prefill backend: 'NOPE'. Valid options are: FLASH_ATTN, "
                  "TRTLLM_RAGGED"),
              std::string::npos)
        << e.what();
  }
}

TEST(VllmMlaPrefill, SparseSkipsPrefillSelection) {
  LayerSpec s = deepseek_v3();
  s.mla->sparse = true;
  const auto p = prefill(s, "b200");
  EXPECT_TRUE(p.backend.empty());
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].message.find("top-k MQA path only"), std::string::npos);
  EXPECT_THROW(prefill(standard(8, 8, 128), "b200"), InvalidArgument);
}

TEST(VllmMlaPrefill, CatalogRunsOnTheSharedSelector) {
  const Catalog& c = vllm_mla_prefill_catalog();
  EXPECT_EQ(c.names(), (std::vector<std::string>{"FLASH_ATTN", "TRTLLM_RAGGED", "FLASHINFER",
                                                 "TOKENSPEED_MLA", "ROCM_AITER_FA", "CPU_NATIVE"}));
  Selector sel(c, device_from_name("b200"));
  EXPECT_EQ(
      sel.select(glm5()).candidates,
      (std::vector<std::string>{"TRTLLM_RAGGED", "FLASH_ATTN", "FLASHINFER", "TOKENSPEED_MLA"}));
  EXPECT_EQ(sel.select(deepseek_v3()).candidates[0], "FLASH_ATTN");
}

}  // namespace
}  // namespace attnkit
