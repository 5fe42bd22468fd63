// `dtype auto` (resolve_model_dtype): vLLM's _resolve_auto_dtype over each stack's dtypes on a
// device: the vLLM stack's Platform.supported_dtypes, the native stack's declared ones.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attnkit/error.hpp"
#include "attnkit/selector.hpp"
#include "stacks/stacks.hpp"

namespace attnkit {
namespace {

using ::testing::HasSubstr;

ModelDtypeQuery query(std::string type, std::optional<DType> config, bool pooling = false,
                      std::optional<DType> requested = std::nullopt) {
  return {std::move(type), config, pooling, requested};
}

DeviceInfo cuda_cc(int major, int minor) {
  DeviceInfo d = device_from_name("a100");
  d.cc = {major, minor};
  d.name = "test GPU";
  return d;
}

TEST(ModelDtype, Float32CheckpointsRunInThePlatformsFirstDtype) {
  for (const Catalog* c : {&native_catalog(), &vllm_catalog()}) {
    for (const char* dev : {"h100", "a100", "b200", "cpu-avx512"}) {
      const ModelDtype d =
          resolve_model_dtype(*c, device_from_name(dev), query("t5", DType::kFloat32));
      EXPECT_EQ(d.dtype, DType::kBFloat16) << c->name << " " << dev;
      EXPECT_THAT(d.note, HasSubstr("runs the float32 checkpoint in bfloat16"));
      EXPECT_THAT(d.note, HasSubstr("--dtype float32 keeps float32"));
      // Pooling (encoder-only) models prefer float16.
      const ModelDtype p =
          resolve_model_dtype(*c, device_from_name(dev), query("bert", DType::kFloat32, true));
      EXPECT_EQ(p.dtype, DType::kFloat16) << c->name << " " << dev;
      EXPECT_THAT(p.note, HasSubstr("float16 for a pooling"));
    }
  }
}

TEST(ModelDtype, SixteenBitConfigsAndRequestsAreKeptWithoutANote) {
  const DeviceInfo h100 = device_from_name("h100");
  for (const Catalog* c : {&native_catalog(), &vllm_catalog()}) {
    for (DType t : {DType::kBFloat16, DType::kFloat16}) {
      const ModelDtype d = resolve_model_dtype(*c, h100, query("llama", t));
      EXPECT_EQ(d.dtype, t);
      EXPECT_TRUE(d.note.empty()) << d.note;
    }
    // A request wins over the config, float32 included (the native CUDA stack then fails at
    // selection, naming the dtypes that run).
    EXPECT_EQ(
        resolve_model_dtype(*c, h100, query("t5", DType::kFloat32, false, DType::kFloat32)).dtype,
        DType::kFloat32);
    EXPECT_EQ(
        resolve_model_dtype(*c, h100, query("llama", DType::kBFloat16, false, DType::kFloat16))
            .dtype,
        DType::kFloat16);
  }
}

// vLLM's CUDA platform: no bfloat16 below compute capability 8.0, only float32 below 6.0.
TEST(ModelDtype, VllmFallsBackWhereTheGpuLacksTheConfigsDtype) {
  const ModelDtype t4 =
      resolve_model_dtype(vllm_catalog(), cuda_cc(7, 5), query("llama", DType::kBFloat16));
  EXPECT_EQ(t4.dtype, DType::kFloat16);
  EXPECT_THAT(t4.note, HasSubstr("test GPU does not run bfloat16 through the vllm stack (it runs "
                                 "float16, float32): dtype auto falls back to float16"));
  EXPECT_EQ(resolve_model_dtype(vllm_catalog(), cuda_cc(7, 5), query("t5", DType::kFloat32)).dtype,
            DType::kFloat16);
  EXPECT_EQ(
      resolve_model_dtype(vllm_catalog(), cuda_cc(5, 2), query("llama", DType::kBFloat16)).dtype,
      DType::kFloat32);
  // The native stack has no backend below 8.0: the config's dtype stays, and selection says why.
  const ModelDtype native =
      resolve_model_dtype(native_catalog(), cuda_cc(7, 5), query("llama", DType::kBFloat16));
  EXPECT_EQ(native.dtype, DType::kBFloat16);
  EXPECT_TRUE(native.note.empty()) << native.note;
  EXPECT_EQ(resolve_model_dtype(native_catalog(), device_from_name("mi300x"),
                                query("t5", DType::kFloat32))
                .dtype,
            DType::kFloat32);
}

// gemma2, gemma3, gemma3_text, plamo2, glm4: auto never picks float16, and the vLLM stack refuses
// a request for it (vLLM's _FLOAT16_NOT_SUPPORTED_MODELS); the native stack warns.
TEST(ModelDtype, Float16IsNeverPickedForModelsUnstableInIt) {
  EXPECT_EQ(
      resolve_model_dtype(vllm_catalog(), cuda_cc(7, 5), query("gemma2", DType::kBFloat16)).dtype,
      DType::kFloat32);
  EXPECT_EQ(resolve_model_dtype(vllm_catalog(), device_from_name("h100"),
                                query("gemma3_text", DType::kFloat32, true))
                .dtype,
            DType::kBFloat16);
  for (const char* type : {"gemma2", "gemma3", "gemma3_text", "plamo2", "glm4"}) {
    try {
      resolve_model_dtype(vllm_catalog(), device_from_name("h100"),
                          query(type, DType::kBFloat16, false, DType::kFloat16));
      ADD_FAILURE() << "expected Unsupported for " << type;
    } catch (const Unsupported& e) {
      EXPECT_THAT(e.what(), HasSubstr("--dtype float16 with --stack vllm: model type '" +
                                      std::string(type) + "' is numerically unstable in float16"));
    }
    const ModelDtype n = resolve_model_dtype(native_catalog(), device_from_name("h100"),
                                             query(type, DType::kBFloat16, false, DType::kFloat16));
    EXPECT_EQ(n.dtype, DType::kFloat16);
    EXPECT_THAT(n.note, HasSubstr("use bfloat16 or float32"));
  }
  EXPECT_EQ(resolve_model_dtype(vllm_catalog(), device_from_name("h100"),
                                query("gemma", DType::kBFloat16, false, DType::kFloat16))
                .dtype,
            DType::kFloat16);
}

TEST(ModelDtype, AConfigWithoutADtypeIsTakenAsBfloat16WithANote) {
  for (const Catalog* c : {&native_catalog(), &vllm_catalog()}) {
    const ModelDtype d =
        resolve_model_dtype(*c, device_from_name("h100"), query("gpt_oss", std::nullopt));
    EXPECT_EQ(d.dtype, DType::kBFloat16);
    EXPECT_THAT(d.note, HasSubstr("the config names no dtype"));
  }
  const ModelDtype t4 =
      resolve_model_dtype(vllm_catalog(), cuda_cc(7, 5), query("gpt_oss", std::nullopt));
  EXPECT_EQ(t4.dtype, DType::kFloat16);
  EXPECT_THAT(t4.note, HasSubstr("names no dtype"));
  EXPECT_THAT(t4.note, HasSubstr("falls back to float16"));
}

}  // namespace
}  // namespace attnkit
