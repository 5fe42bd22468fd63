// The vLLM catalog on the shared selector: priorities, explicit choices, reasons (spec §3, §4,
// §8 test_attention_selector.py) and the "done when" cases on hand-built layers.
#include <gtest/gtest.h>

#include "attnkit/error.hpp"
#include "attnkit/log.hpp"
#include "stacks/stacks.hpp"
#include "stacks/vllm/vllm_stack.hpp"
#include "vllm_test_layers.hpp"

namespace attnkit {
namespace {

using namespace vllm_test;

Selection pick(const LayerSpec& s, const char* dev, std::optional<std::string> backend = {},
               const Catalog& cat = vllm_catalog(), std::optional<std::string> variant = {}) {
  Selector sel(cat, device_from_name(dev), SelectOptions{backend, variant});
  return sel.select(s);
}

std::vector<std::string> reasons(const LayerSpec& s, const char* dev, const std::string& backend,
                                 const Catalog& cat = vllm_catalog()) {
  Selector sel(cat, device_from_name(dev));
  return reasons_of(sel.evaluate_all(s), backend);
}

std::string error_of(const LayerSpec& s, const char* dev, std::optional<std::string> backend,
                     const Catalog& cat = vllm_catalog()) {
  try {
    pick(s, dev, backend, cat);
  } catch (const Unsupported& e) {
    return e.what();
  }
  return "";
}

// ---- the "done when", at library level

TEST(VllmDoneWhen, Gemma2OnB200ExplicitFlashAttnIsFa2WithOneWarning) {
  reset_warn_once();
  ScopedLogCapture log;
  Selector sel(vllm_catalog(), device_from_name("b200"), SelectOptions{"FLASH_ATTN", {}});
  const Selection& sliding = sel.select(gemma2(true));
  const Selection& global = sel.select(gemma2(false));
  EXPECT_EQ(sliding.backend, "FLASH_ATTN");
  EXPECT_EQ(sliding.variant, "FA2");
  EXPECT_EQ(global.variant, "FA2");
  ASSERT_EQ(sliding.warnings.size(), 1u);
  EXPECT_EQ(sliding.warnings[0].cause, "vllm:fa4_hd256_blackwell");
  const std::string text = log.text();
  const std::string needle = "temporarily disabled for head_size=256";
  const auto first = text.find(needle);
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find(needle, first + 1), std::string::npos) << "warned twice:\n" << text;
}

TEST(VllmDoneWhen, Gemma2OnH100IsFa3WithoutWarning) {
  const Selection s = pick(gemma2(), "h100", "FLASH_ATTN");
  EXPECT_EQ(s.variant, "FA3");
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(pick(gemma2(), "h100").backend, "FLASH_ATTN");  // auto: first on SM90
}

TEST(VllmDoneWhen, GptOssOnA100DoesNotPickFlashAttn) {
  const Selection s = pick(gpt_oss(), "a100");
  EXPECT_NE(s.backend, "FLASH_ATTN");
  EXPECT_EQ(s.backend, "TRITON_ATTN");
  const auto r = reasons_of(s.rejected, "FLASH_ATTN");
  EXPECT_TRUE(contains(r, "sink not supported on compute capability < 9.0"));
  EXPECT_TRUE(contains(r, "attention sinks not supported"));
  EXPECT_TRUE(contains(reasons_of(s.rejected, "FLASHINFER"), "attention sinks not supported"));
  // An explicit FLASH_ATTN fails with the same reason and names what would work.
  const std::string err = error_of(gpt_oss(), "a100", "FLASH_ATTN");
  EXPECT_NE(err.find("sink not supported on compute capability < 9.0"), std::string::npos);
  EXPECT_NE(err.find("TRITON_ATTN"), std::string::npos);
}

TEST(VllmDoneWhen, GptOssElsewhere) {
  EXPECT_EQ(pick(gpt_oss(), "h100").backend, "FLASH_ATTN");
  EXPECT_EQ(pick(gpt_oss(), "h100").variant, "FA3");
  EXPECT_EQ(pick(gpt_oss(), "b200").backend, "FLASHINFER");     // trtllm-gen sinks
  EXPECT_EQ(pick(gpt_oss(), "rtx5090").backend, "FLASHINFER");  // XQA decode sinks
  VllmConfig no_trtllm;
  no_trtllm.use_trtllm_attention = false;
  const Catalog cat = make_vllm_catalog(no_trtllm);
  EXPECT_EQ(pick(gpt_oss(), "b200", {}, cat).backend, "FLASH_ATTN");
  EXPECT_EQ(pick(gpt_oss(), "b200", {}, cat).variant, "FA4");
}

// ---- priority lists (§4.3-§4.5)

TEST(VllmPriorities, CudaStandard) {
  const auto h100 = pick(standard(32, 8, 128), "h100");
  EXPECT_EQ(h100.candidates, (std::vector<std::string>{"FLASH_ATTN", "FLASHINFER", "TRITON_ATTN",
                                                       "FLEX_ATTENTION", "TURBOQUANT"}));
  const auto b200 = pick(standard(32, 8, 128), "b200");
  EXPECT_EQ(b200.backend, "FLASHINFER");
  EXPECT_EQ(b200.candidates[0], "FLASHINFER");
  EXPECT_EQ(pick(standard(32, 8, 128), "rtx5090").backend, "FLASH_ATTN");
  EXPECT_EQ(pick(standard(32, 8, 128), "a100").variant, "FA2");
}

TEST(VllmPriorities, NonCausalOnBlackwellPutsFlashAttnFirst) {
  VllmConfig cfg;
  cfg.use_non_causal = true;
  const Catalog cat = make_vllm_catalog(cfg);
  const auto s = pick(standard(32, 8, 128), "b200", {}, cat);
  EXPECT_EQ(s.candidates[0], "FLASH_ATTN");
  EXPECT_EQ(s.backend, "FLASH_ATTN");
  // An explicit FA or FlashInfer is accepted (both support non-causal).
  EXPECT_EQ(pick(standard(32, 8, 128), "b200", "FLASH_ATTN", cat).backend, "FLASH_ATTN");
  EXPECT_EQ(pick(standard(32, 8, 128), "b200", "FLASHINFER", cat).backend, "FLASHINFER");
  EXPECT_TRUE(contains(reasons(standard(32, 8, 128), "b200", "TURBOQUANT", cat),
                       "non-causal attention not supported"));
}

TEST(VllmPriorities, CudaMla) {
  EXPECT_EQ(pick(deepseek_v3(), "b200").backend, "FLASHINFER_MLA");
  EXPECT_EQ(pick(deepseek_v3(), "h100").backend, "FLASH_ATTN_MLA");
  EXPECT_EQ(pick(deepseek_v3(), "a100").backend, "TRITON_MLA");
  const auto sm120 = pick(deepseek_v3(), "rtx5090");
  EXPECT_EQ(sm120.backend, "TRITON_MLA");
  EXPECT_EQ(sm120.candidates,
            (std::vector<std::string>{"TRITON_MLA", "FLASHINFER_MLA_SPARSE_SM120"}));
}

TEST(VllmPriorities, SparseMlaOrdering) {
  LayerSpec sparse = deepseek_v3();
  sparse.mla->sparse = true;
  auto tail = [](const Selection& s) {
    return std::vector<std::string>(s.candidates.end() - 2, s.candidates.end());
  };
  sparse.num_heads = 128;  // bf16 KV, many heads: FlashMLA sparse first
  auto s = pick(sparse, "b200");
  EXPECT_EQ(tail(s), (std::vector<std::string>{"FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE"}));
  EXPECT_EQ(s.backend, "FLASHMLA_SPARSE");
  EXPECT_TRUE(contains(reasons_of(s.rejected, "FLASHINFER_MLA"), "sparse not supported"));
  sparse.num_heads = 16;
  EXPECT_EQ(tail(pick(sparse, "b200")),
            (std::vector<std::string>{"FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE"}));
  sparse.num_heads = 128;
  sparse.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_EQ(pick(sparse, "b200").backend, "FLASHINFER_MLA_SPARSE");
  sparse.kv_cache_dtype = KvCacheDType::kAuto;
  EXPECT_EQ(pick(sparse, "h100").backend, "FLASH_ATTN_MLA_SPARSE");
  EXPECT_EQ(pick(sparse, "rtx5090").backend, "FLASHINFER_MLA_SPARSE_SM120");
}

TEST(VllmPriorities, Rocm) {
  const auto s = pick(standard(32, 8, 128), "mi300x");
  EXPECT_EQ(s.backend, "ROCM_ATTN");
  EXPECT_EQ(s.candidates, (std::vector<std::string>{"ROCM_ATTN", "ROCM_AITER_UNIFIED_ATTN",
                                                    "TRITON_ATTN", "TURBOQUANT"}));
  EXPECT_EQ(pick(gpt_oss(), "mi300x").backend, "ROCM_AITER_UNIFIED_ATTN");  // sinks
  VllmConfig aiter;
  aiter.rocm_aiter = true;
  const Catalog a = make_vllm_catalog(aiter);
  EXPECT_EQ(pick(standard(32, 8, 128), "mi300x", {}, a).candidates,
            (std::vector<std::string>{"ROCM_ATTN", "ROCM_AITER_FA", "ROCM_AITER_UNIFIED_ATTN",
                                      "TRITON_ATTN", "TURBOQUANT"}));
  EXPECT_EQ(pick(deepseek_v3(), "mi300x", {}, a).backend, "ROCM_AITER_MLA");
  EXPECT_EQ(pick(deepseek_v3(), "mi300x").backend, "TRITON_MLA");
  VllmConfig conn;
  conn.use_kv_connector = true;
  const Catalog c = make_vllm_catalog(conn);
  EXPECT_EQ(pick(standard(32, 8, 128), "mi300x", {}, c).backend, "ROCM_AITER_UNIFIED_ATTN");
  EXPECT_TRUE(contains(reasons(standard(32, 8, 128), "mi300x", "ROCM_ATTN", c),
                       "KV connector not supported"));
}

TEST(VllmPriorities, RocmHead16HasNoValidBackend) {
  const std::string err = error_of(standard(8, 8, 16), "mi300x", {});
  EXPECT_NE(err.find("No valid attention backend"), std::string::npos);
}

TEST(VllmPriorities, RocmTritonMlaWithBlock1Raises) {
  LayerSpec s = deepseek_v3();
  s.block_size = 1;
  EXPECT_NE(error_of(s, "mi300x", "TRITON_MLA").find("block_size not supported"),
            std::string::npos);
}

TEST(VllmPriorities, CpuAlwaysCpuAttn) {
  LayerSpec s = standard(32, 8, 128);
  EXPECT_EQ(pick(s, "cpu").backend, "CPU_ATTN");
  reset_warn_once();
  ScopedLogCapture log;
  const auto forced = pick(s, "cpu", "FLASH_ATTN");
  EXPECT_EQ(forced.backend, "CPU_ATTN");
  EXPECT_NE(log.text().find("Cannot use FLASH_ATTN backend on CPU."), std::string::npos);
  s.dtype = DType::kFloat32;
  EXPECT_EQ(pick(s, "cpu").backend, "CPU_ATTN");
  // MLA goes to CPU_MLA (AMX_MLA on AMX machines); an explicit CPU_MLA is kept.
  DeviceInfo cpu = device_from_name("cpu");
  cpu.has_amx = false;
  EXPECT_EQ(Selector(vllm_catalog(), cpu).select(deepseek_v3()).backend, "CPU_MLA");
  cpu.has_amx = true;
  cpu.arch = "x86_64";
  EXPECT_EQ(Selector(vllm_catalog(), cpu).select(deepseek_v3()).backend, "AMX_MLA");
  EXPECT_EQ(Selector(vllm_catalog(), cpu, {"CPU_MLA", {}}).select(deepseek_v3()).backend,
            "CPU_MLA");
}

TEST(VllmPriorities, CpuValidatesHeadSizeUnlikeVllm) {
  // vLLM's CPU platform returns CPU_ATTN without validation; attnkit refuses a head size the
  // backend does not list rather than fail later in the kernel.
  LayerSpec s = standard(8, 8, 16);
  s.dtype = DType::kFloat32;
  EXPECT_NE(error_of(s, "cpu", {}).find("head_size not supported"), std::string::npos);
}

TEST(VllmPriorities, XpuFirstMatch) {
  const auto s = pick(standard(32, 8, 128), "xpu");
  EXPECT_EQ(s.backend, "FLASH_ATTN");
  EXPECT_EQ(s.variant, "FA2");
  LayerSpec f32 = standard(32, 8, 128);
  f32.dtype = DType::kFloat32;
  const auto t = pick(f32, "xpu");
  EXPECT_EQ(t.backend, "TRITON_ATTN");
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_EQ(pick(f32, "xpu", "FLASH_ATTN").backend, "TRITON_ATTN");
  EXPECT_EQ(pick(deepseek_v3(), "xpu", "FLASH_ATTN").backend, "TRITON_MLA");
  EXPECT_EQ(pick(standard(32, 8, 128), "xpu", "TRITON_ATTN").backend, "TRITON_ATTN");
  EXPECT_NE(error_of(standard(32, 8, 128), "xpu", "FLASHINFER")
                .find("Invalid attention backend for xpu, with use_mla: False"),
            std::string::npos);
  LayerSpec mm = standard(32, 8, 128);
  mm.mm_prefix = true;
  EXPECT_EQ(pick(mm, "xpu").backend, "TRITON_ATTN");
  const auto fa = pick(mm, "xpu", "FLASH_ATTN");
  EXPECT_EQ(fa.backend, "FLASH_ATTN");
  ASSERT_FALSE(fa.warnings.empty());
  EXPECT_NE(fa.warnings[0].message.find("cannot be applied"), std::string::npos);
}

// ---- explicit choices and reasons (§8 test_attention_selector.py)

TEST(VllmExplicit, MlaDecodeBackendsNeedTheirBlockAndCc) {
  LayerSpec s = deepseek_v3();
  s.block_size = 128;
  EXPECT_EQ(pick(s, "b200", "CUTLASS_MLA").backend, "CUTLASS_MLA");
  EXPECT_NE(error_of(s, "h100", "CUTLASS_MLA").find("compute capability not supported"),
            std::string::npos);
  s.block_size = 64;
  EXPECT_NE(error_of(s, "b200", "CUTLASS_MLA").find("block_size not supported"), std::string::npos);
  EXPECT_EQ(pick(s, "b200", "FLASHINFER_MLA").backend, "FLASHINFER_MLA");
  EXPECT_EQ(pick(s, "h100", "FLASHMLA").backend, "FLASHMLA");
  EXPECT_EQ(pick(s, "b200", "FLASHMLA").backend, "FLASHMLA");
  s.block_size = 32;
  EXPECT_EQ(pick(s, "b200", "FLASHINFER_MLA").backend, "FLASHINFER_MLA");
  EXPECT_NE(error_of(s, "h100", "FLASHMLA").find("block_size not supported"), std::string::npos);
  s.block_size = 16;
  EXPECT_NE(error_of(s, "b200", "FLASHINFER_MLA").find("block_size not supported"),
            std::string::npos);
}

TEST(VllmExplicit, Fp32OnCudaAutoSelectsFlex) {
  LayerSpec s = standard(8, 8, 16);
  s.dtype = DType::kFloat32;
  EXPECT_EQ(pick(s, "h100").backend, "FLEX_ATTENTION");
  EXPECT_EQ(pick(s, "b200").backend, "FLEX_ATTENTION");
}

TEST(VllmExplicit, UnknownNameAndAuto) {
  EXPECT_THROW(Selector(vllm_catalog(), device_from_name("h100"), {"NOT_A_BACKEND", {}}),
               InvalidArgument);
  const LayerSpec s = standard(32, 8, 128);
  for (const char* a : {"auto", "AUTO", "Auto"})
    EXPECT_EQ(pick(s, "h100", std::string(a)).backend, pick(s, "h100").backend);
  EXPECT_EQ(pick(s, "h100", std::string("flash_attn")).backend, "FLASH_ATTN");  // any case
}

TEST(VllmExplicit, PerHeadQuantScales) {
  LayerSpec s = standard(32, 8, 128);
  s.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  s.kv_scale_granularity = ScaleGranularity::kPerHead;
  const auto ok = pick(s, "h100", "FLASH_ATTN");
  EXPECT_EQ(ok.variant, "FA3");
  for (auto [dev, backend] : std::vector<std::pair<const char*, const char*>>{
           {"h100", "FLASHINFER"}, {"h100", "FLEX_ATTENTION"}}) {
    const std::string err = error_of(s, dev, backend);
    EXPECT_NE(err.find(backend), std::string::npos) << err;
    EXPECT_NE(err.find("per-head quant scales not supported"), std::string::npos) << err;
  }
  // FA2: a requested version 2 on H100 fails with the backend named.
  try {
    pick(s, "h100", "FLASH_ATTN", vllm_catalog(), "2");
    ADD_FAILURE() << "FA2 accepted per-head scales";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("FLASH_ATTN"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("per-head quant scales not supported"), std::string::npos);
  }
  LayerSpec bf16 = s;
  bf16.kv_cache_dtype = KvCacheDType::kAuto;
  EXPECT_TRUE(contains(reasons(bf16, "a100", "FLASH_ATTN"), "per-head quant scales not supported"));
}

TEST(VllmExplicit, FlashAttnKvDtypes) {
  LayerSpec s = standard(32, 8, 128);
  for (auto kv : {KvCacheDType::kFp8E5M2, KvCacheDType::kNvfp4}) {
    s.kv_cache_dtype = kv;
    EXPECT_TRUE(contains(reasons(s, "h100", "FLASH_ATTN"), "kv_cache_dtype not supported"))
        << to_string(kv);
  }
  s.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_TRUE(reasons(s, "h100", "FLASH_ATTN").empty());
  EXPECT_TRUE(reasons(s, "b200", "FLASH_ATTN").empty());
  EXPECT_TRUE(contains(reasons(s, "a100", "FLASH_ATTN"),
                       "FP8 KV cache requires FA3 on SM90 or FA4 on SM100"));
  LayerSpec g = gemma2();
  g.kv_cache_dtype = KvCacheDType::kFp8E4M3;  // head 256 resolves to FA2 on Blackwell
  EXPECT_TRUE(contains(reasons(g, "b200", "FLASH_ATTN"),
                       "FP8 KV cache requires FA3 on SM90 or FA4 on SM100"));
}

TEST(VllmExplicit, FlashAttnHeadSizesAndMmPrefix) {
  EXPECT_TRUE(reasons(standard(8, 8, 512), "h100", "FLASH_ATTN").empty());
  EXPECT_TRUE(
      contains(reasons(standard(8, 8, 100), "h100", "FLASH_ATTN"), "head_size not supported"));
  VllmConfig no_fa4;
  no_fa4.fa4_built = false;
  EXPECT_TRUE(
      contains(reasons(standard(8, 8, 512), "h100", "FLASH_ATTN", make_vllm_catalog(no_fa4)),
               "head_size not supported"));
  LayerSpec mm = standard(8, 8, 128);
  mm.mm_prefix = true;
  EXPECT_TRUE(reasons(mm, "b200", "FLASH_ATTN").empty());  // FA4
  EXPECT_TRUE(contains(reasons(mm, "h100", "FLASH_ATTN"),
                       "mm_prefix (PrefixLM bidirectional attention) requires FlashAttention v4, "
                       "which does not resolve for this head_size"));
}

TEST(VllmExplicit, PinnedBlockSizeWarning) {
  LayerSpec s = deepseek_v3();
  s.block_size = 16;
  reset_warn_once();
  ScopedLogCapture log;
  const auto sel = pick(s, "b200");
  EXPECT_EQ(sel.backend, "TRITON_MLA");
  ASSERT_EQ(sel.warnings.size(), 1u);
  EXPECT_NE(sel.warnings[0].message.find(
                "--block-size 16 precluded higher-priority backend(s) FLASHINFER_MLA, "
                "CUTLASS_MLA, FLASHMLA. Using TRITON_MLA instead"),
            std::string::npos)
      << sel.warnings[0].message;
}

TEST(VllmExplicit, FlashAttnVariantRequest) {
  const LayerSpec s = standard(32, 8, 128);
  EXPECT_EQ(pick(s, "h100", "FLASH_ATTN", vllm_catalog(), "2").variant, "FA2");
  EXPECT_EQ(pick(s, "h100", "FLASH_ATTN", vllm_catalog(), "FA4").variant, "FA4");
  const auto b = pick(s, "b200", "FLASH_ATTN", vllm_catalog(), "3");
  EXPECT_EQ(b.variant, "FA4");
  EXPECT_EQ(b.warnings.at(0).cause, "vllm:fa3_on_blackwell");
  EXPECT_THROW(pick(s, "a100", "FLASH_ATTN", vllm_catalog(), "3"), Unsupported);
  // Auto picks FLASHINFER on Blackwell: the FA version request is reported as ignored.
  const auto fi = pick(s, "b200", {}, vllm_catalog(), "3");
  EXPECT_EQ(fi.backend, "FLASHINFER");
  ASSERT_EQ(fi.warnings.size(), 1u);
  EXPECT_EQ(fi.warnings[0].cause, "variant_ignored:FLASHINFER:3");
  // A version FLASH_ATTN does not have is refused on every device, not only where it is picked.
  for (const char* dev : {"h100", "b200", "cpu", "mi300x"})
    EXPECT_THROW(pick(s, dev, {}, vllm_catalog(), "9"), InvalidArgument) << dev;
}

// ---- FlashInfer rules (§3.1)

TEST(VllmFlashInfer, HeadSizesAndCompute) {
  EXPECT_TRUE(reasons(standard(32, 8, 512), "b200", "FLASHINFER").empty());  // Gemma-4 full
  EXPECT_TRUE(
      contains(reasons(standard(32, 8, 512), "rtx5090", "FLASHINFER"), "head_size not supported"));
  EXPECT_TRUE(
      contains(reasons(standard(32, 8, 96), "b200", "FLASHINFER"), "head_size not supported"));
  EXPECT_TRUE(reasons(standard(32, 8, 128), "a100", "FLASHINFER").empty());
  DeviceInfo turing = device_from_name("a100");
  turing.cc = {7, 5};
  Selector sel(vllm_catalog(), turing);
  EXPECT_TRUE(contains(reasons_of(sel.evaluate_all(standard(32, 8, 128)), "FLASHINFER"),
                       "compute capability not supported"));
}

TEST(VllmFlashInfer, SinksOnlyOnTrtllmOrXqa) {
  const LayerSpec s = gpt_oss(false);
  EXPECT_TRUE(reasons(s, "b200", "FLASHINFER").empty());
  EXPECT_TRUE(reasons(s, "rtx5090", "FLASHINFER").empty());
  EXPECT_TRUE(contains(reasons(s, "h100", "FLASHINFER"), "attention sinks not supported"));
  EXPECT_TRUE(contains(reasons(s, "a100", "FLASHINFER"), "attention sinks not supported"));
  VllmConfig off;
  off.use_trtllm_attention = false;
  const Catalog cat = make_vllm_catalog(off);
  EXPECT_TRUE(contains(reasons(s, "b200", "FLASHINFER", cat), "attention sinks not supported"));
  EXPECT_TRUE(contains(reasons(s, "rtx5090", "FLASHINFER", cat), "attention sinks not supported"));
}

TEST(VllmFlashInfer, SlidingWindowOnSm90AndNvfp4) {
  EXPECT_FALSE(reasons(gemma2(), "h100", "FLASHINFER").empty());
  EXPECT_TRUE(reasons(gemma2(), "b200", "FLASHINFER").empty());
  LayerSpec s = standard(32, 8, 128);
  s.kv_cache_dtype = KvCacheDType::kNvfp4;
  EXPECT_TRUE(reasons(s, "b200", "FLASHINFER").empty());
  EXPECT_TRUE(contains(reasons(s, "h100", "FLASHINFER"),
                       "--kv-cache-dtype nvfp4 requires the SM100 trtllm-gen FlashInfer path"));
}

TEST(VllmFlashInfer, Fp8KernelViewIsNeverUint8) {
  LayerSpec s = standard(32, 8, 128);
  s.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_EQ(vllm_flashinfer_kernel_view(s).rfind("float8_e4m3fn", 0), 0u);
  s.kv_cache_dtype = KvCacheDType::kFp8E5M2;
  EXPECT_EQ(vllm_flashinfer_kernel_view(s).rfind("float8_e5m2", 0), 0u);
  s.kv_cache_dtype = KvCacheDType::kNvfp4;
  EXPECT_EQ(vllm_flashinfer_kernel_view(s).rfind("nvfp4", 0), 0u);
  s.kv_cache_dtype = KvCacheDType::kAuto;
  EXPECT_EQ(vllm_flashinfer_kernel_view(s), "bfloat16");
}

// ---- other backends' rules

TEST(VllmBackends, TritonFlexTurboquant) {
  LayerSpec s = standard(32, 8, 128);
  s.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_TRUE(contains(reasons(s, "a100", "TRITON_ATTN"),
                       "fp8 KV cache requires compute capability >= 8.9"));
  EXPECT_TRUE(reasons(s, "l40s", "TRITON_ATTN").empty());
  LayerSpec alibi = standard(32, 8, 128);
  alibi.alibi = true;
  EXPECT_TRUE(reasons(alibi, "h100", "TRITON_ATTN").empty());
  EXPECT_TRUE(contains(reasons(alibi, "h100", "FLEX_ATTENTION"), "ALiBi not supported"));
  EXPECT_TRUE(contains(reasons(standard(32, 8, 128), "h100", "TURBOQUANT"),
                       "kv_cache_dtype not supported"));
  EXPECT_EQ(pick(alibi, "h100").variant, "FA2");  // ALiBi forces FA2 in the impl
}

TEST(VllmBackends, ModelsMlaRules) {
  LayerSpec mistral = mla(64, 64, 128);
  EXPECT_TRUE(reasons(mistral, "b200", "FLASHINFER_MLA").empty());
  LayerSpec odd = mla(96, 64, 128);
  EXPECT_TRUE(contains(reasons(odd, "b200", "FLASHINFER_MLA"),
                       "qk_nope_head_dim 96 not supported (supported: 64, 128, 192)"));
  EXPECT_TRUE(contains(reasons(deepseek_v3(), "b200", "FLASHINFER"), "MLA not supported"));
  EXPECT_TRUE(
      contains(reasons(standard(32, 8, 128), "b200", "FLASHINFER_MLA"), "non-MLA not supported"));
  LayerSpec sw = deepseek_v3();
  sw.sliding_window = 1024;
  EXPECT_TRUE(contains(reasons(sw, "h100", "TRITON_MLA"), "sliding window not supported"));
}

TEST(VllmBackends, CatalogDeclaresTheSpecBackends) {
  const Catalog& c = vllm_catalog();
  EXPECT_EQ(c.name, "vllm");
  for (const char* n : {"FLASH_ATTN",
                        "FLASHINFER",
                        "TRITON_ATTN",
                        "FLEX_ATTENTION",
                        "TURBOQUANT",
                        "CPU_ATTN",
                        "ROCM_ATTN",
                        "ROCM_AITER_FA",
                        "ROCM_AITER_UNIFIED_ATTN",
                        "FLASHINFER_MLA",
                        "TOKENSPEED_MLA",
                        "CUTLASS_MLA",
                        "FLASH_ATTN_MLA",
                        "FLASHMLA",
                        "TRITON_MLA",
                        "FLASHMLA_SPARSE",
                        "FLASHINFER_MLA_SPARSE",
                        "FLASHINFER_MLA_SPARSE_SM120",
                        "FLASH_ATTN_MLA_SPARSE",
                        "ROCM_AITER_MLA",
                        "ROCM_AITER_TRITON_MLA",
                        "ROCM_AITER_MLA_SPARSE",
                        "XPU_MLA_SPARSE",
                        "CPU_MLA",
                        "AMX_MLA"})
    EXPECT_NE(c.find(n), nullptr) << n;
  ASSERT_NE(c.find("FLASH_ATTN"), nullptr);
  EXPECT_EQ(to_string(c.find("FLASH_ATTN")->caps.kernel_block_sizes), "[MultipleOf(16)]");
  EXPECT_TRUE(c.plan_details != nullptr);
}

// ---- plan details (§6, §7)

std::string detail(const LayerSpec& s, const char* dev, const std::string& label,
                   std::optional<std::string> backend = {}) {
  const Catalog& c = vllm_catalog();
  Selector sel(c, device_from_name(dev), SelectOptions{backend, {}});
  const Selection& picked = sel.select(s);
  for (const auto& [k, v] : c.plan_details(s, sel.device(), sel.options(), picked))
    if (k == label) return v;
  return "<missing>";
}

TEST(VllmPlanDetails, MlaPrefillLine) {
  EXPECT_EQ(detail(glm5(), "b200", "MLA prefill backend"), "TRTLLM_RAGGED");
  EXPECT_EQ(detail(deepseek_v3(), "b200", "MLA prefill backend"), "FLASH_ATTN (FA4)");
  EXPECT_EQ(detail(deepseek_v3(), "h100", "MLA prefill backend"), "FLASH_ATTN (FA3)");
  EXPECT_EQ(detail(deepseek_v3(), "a100", "MLA prefill backend"),
            "FLASH_ATTN (FA2, V zero-padded to the QK size)");
  EXPECT_EQ(detail(standard(32, 8, 128), "b200", "MLA prefill backend"), "<missing>");
}

TEST(VllmPlanDetails, KvFacts) {
  LayerSpec s = standard(32, 8, 128);
  s.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_EQ(detail(s, "b200", "KV cache layout"), "HND (required by FLASHINFER; set process-wide)");
  EXPECT_EQ(pick(s, "b200").variant, "trtllm-gen");
  EXPECT_EQ(pick(s, "h100", "FLASHINFER").variant, "native");
  EXPECT_EQ(pick(s, "rtx5090", "FLASHINFER").variant, "native+XQA");
  EXPECT_EQ(detail(s, "b200", "FlashInfer kernel view").rfind("float8_e4m3fn", 0), 0u);
  EXPECT_EQ(detail(s, "b200", "Kernel block sizes"), "[16, 32, 64, 128, 256, 512, 1024]");
  EXPECT_EQ(detail(s, "h100", "Kernel block sizes"), "[MultipleOf(16)]");
  EXPECT_EQ(detail(s, "h100", "Kernel block size"), "16");
  EXPECT_EQ(detail(s, "h100", "CUDA graph support"), "ALWAYS");  // FA3
  EXPECT_EQ(detail(s, "h100", "Page bytes per layer"), "32768 per 16-token block");
  LayerSpec pinned = deepseek_v3();
  pinned.block_size = 256;
  EXPECT_EQ(detail(pinned, "b200", "Kernel block size"),
            "64 (4 kernel blocks per 256-token block)");
  EXPECT_EQ(detail(deepseek_v3(), "b200", "Block size"),
            "32 (preferred by FLASHINFER_MLA; default 16)");
}

}  // namespace
}  // namespace attnkit

namespace attnkit {
namespace {

using namespace vllm_test;

TEST(VllmPerKind, KindsAndOverrides) {
  EXPECT_EQ(vllm_kv_group_kind(gemma2(true)), "sliding_window");
  EXPECT_EQ(vllm_kv_group_kind(gemma2(false)), "full_attention");
  EXPECT_EQ(vllm_kv_group_kind(gpt_oss(false)), "full_attention");  // sinks do not change it
  EXPECT_EQ(vllm_kv_group_kind(deepseek_v3()), "mla_attention");
  LayerSpec enc = standard(12, 12, 64);
  enc.attn_type = AttentionType::kEncoderOnly;
  EXPECT_EQ(vllm_kv_group_kind(enc), "encoder_only_attention");
  enc.attn_type = AttentionType::kCross;
  EXPECT_EQ(vllm_kv_group_kind(enc), "cross_attention");

  VllmConfig cfg;
  cfg.backend_per_kind = {{"sliding_window", "TRITON_ATTN"}};
  EXPECT_EQ(vllm_backend_for_layer(gemma2(true), cfg, "FLASH_ATTN"), "TRITON_ATTN");
  EXPECT_EQ(vllm_backend_for_layer(gemma2(false), cfg, "FLASH_ATTN"), "FLASH_ATTN");
  EXPECT_EQ(vllm_backend_for_layer(gemma2(false), cfg, "auto"), std::nullopt);
  cfg.backend_per_kind = {{"full_attention", "Auto"}};
  EXPECT_EQ(vllm_backend_for_layer(gemma2(false), cfg, "FLASH_ATTN"), std::nullopt);
  cfg.backend_per_kind = {{"global_attention", "FLASH_ATTN"}};
  try {
    vllm_backend_for_layer(gemma2(false), cfg, std::nullopt);
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("Unknown KV cache group kind 'global_attention' in "
                                         "backend_per_kind. Valid kinds are: full_attention"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace attnkit

namespace attnkit {
namespace {

using namespace vllm_test;

TEST(VllmProbeErrors, RecordedAndProbingContinues) {
  // test_cuda_backend_probe_errors.py: a PermissionError from FlashInfer's cache directory is a
  // reason, not a crash; an explicit choice fails with the cause.
  VllmConfig cfg;
  cfg.probe_errors = {{"FLASHINFER", "PermissionError: [Errno 13] Permission denied: '/cache'"}};
  const Catalog cat = make_vllm_catalog(cfg);
  Selector sel(cat, device_from_name("b200"));
  const Selection& s = sel.select(standard(32, 8, 128));
  EXPECT_EQ(s.backend, "FLASH_ATTN");
  EXPECT_EQ(reasons_of(s.rejected, "FLASHINFER"),
            std::vector<std::string>{"PermissionError: [Errno 13] Permission denied: '/cache'"});
  Selector forced(cat, device_from_name("b200"), {"FLASHINFER", {}});
  try {
    forced.select(standard(32, 8, 128));
    ADD_FAILURE();
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("Selected backend FLASHINFER is not valid"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("PermissionError"), std::string::npos);
  }
}

}  // namespace
}  // namespace attnkit
