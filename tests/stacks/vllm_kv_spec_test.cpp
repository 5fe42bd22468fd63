// vLLM KV-spec consequences (spec §7.1-§7.3): kernel block sizes, preferred block, per-group
// kernel block negotiation, hybrid alignment, page bytes.
#include <gtest/gtest.h>

#include "attnkit/error.hpp"
#include "stacks/vllm/vllm_stack.hpp"
#include "vllm_test_layers.hpp"

namespace attnkit {
namespace {

using namespace vllm_test;
using BS = BlockSizeEntry;

int preferred(const char* backend, const LayerSpec& s, const char* dev) {
  return vllm_preferred_block_size(backend, s, device_from_name(dev), {});
}

TEST(VllmKvSpec, FlashAttnPagesAnyMultipleOf16) {
  // The hybrid-model [16, 32, 64] restriction is gone: fresh blocks are zeroed (#36701).
  for (const char* dev : {"a100", "h100", "b200", "rtx5090", "xpu"})
    EXPECT_EQ(
        vllm_kernel_block_sizes("FLASH_ATTN", standard(32, 8, 128), device_from_name(dev), {}),
        std::vector<BS>{BS::multiple_of(16)})
        << dev;
}

TEST(VllmKvSpec, FlashInferBlocks) {
  const auto b200 =
      vllm_kernel_block_sizes("FLASHINFER", standard(32, 8, 128), device_from_name("b200"), {});
  EXPECT_EQ(to_string(b200), "[16, 32, 64, 128, 256, 512, 1024]");
  // No GQA, or not SM100: only 16/32/64.
  EXPECT_EQ(to_string(vllm_kernel_block_sizes("FLASHINFER", standard(8, 8, 128),
                                              device_from_name("b200"), {})),
            "[16, 32, 64]");
  EXPECT_EQ(to_string(vllm_kernel_block_sizes("FLASHINFER", standard(32, 8, 128),
                                              device_from_name("h100"), {})),
            "[16, 32, 64]");
}

TEST(VllmKvSpec, PreferredBlockSize) {
  const LayerSpec s = standard(32, 8, 128);
  EXPECT_EQ(preferred("FLASH_ATTN", s, "h100"), 16);
  EXPECT_EQ(preferred("FLASH_ATTN", s, "xpu"), 64);
  EXPECT_EQ(preferred("FLASHINFER", s, "b200"), 16);
  EXPECT_EQ(preferred("ROCM_AITER_UNIFIED_ATTN", s, "mi300x"), 64);
  EXPECT_EQ(preferred("CPU_ATTN", s, "cpu"), 128);
  EXPECT_EQ(preferred("CUTLASS_MLA", deepseek_v3(), "b200"), 128);
  EXPECT_EQ(preferred("FLASHMLA", deepseek_v3(), "h100"), 64);
  EXPECT_EQ(preferred("FLASHINFER_MLA", deepseek_v3(), "b200"), 32);
  EXPECT_EQ(preferred("CPU_MLA", deepseek_v3(), "cpu"), 16);
  EXPECT_THROW(preferred("NOPE", s, "h100"), InvalidArgument);
}

TEST(VllmKvSpec, KernelBlockNegotiation) {
  EXPECT_EQ(vllm_kernel_block_size(16, {{BS::multiple_of(16)}}), 16);
  EXPECT_EQ(vllm_kernel_block_size(480, {{BS::multiple_of(16)}}), 480);
  // Selection accepts 64 for [16, 32] (a divisor), negotiation maps it to 32.
  EXPECT_EQ(vllm_kernel_block_size(64, {{BS::exact(16), BS::exact(32)}}), 32);
  EXPECT_EQ(vllm_kernel_block_size(128, {{BS::multiple_of(16)}, {BS::exact(64)}}), 64);
  // A stricter secondary backend (the DSA indexer's 64) breaks a 16-token block (#48286).
  try {
    vllm_kernel_block_size(16, {{BS::multiple_of(16)}, {BS::exact(64)}});
    ADD_FAILURE();
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("No common block size for 16"), std::string::npos);
  }
}

TEST(VllmKvSpec, HybridAlignmentRaisesAttentionBlock) {
  // 8 KV heads x (128 + 128) x bf16 = 4096 bytes per token; a 1,966,080-byte mamba page.
  const auto a = vllm_align_hybrid_block_size(4096, 1966080, 16, 16, false);
  EXPECT_EQ(a.block_size, 480);
  EXPECT_TRUE(a.raised);
  EXPECT_EQ(a.mamba_page_bytes, 480 * 4096);
  ASSERT_EQ(a.logs.size(), 1u);  // exact fit: no padding line
  EXPECT_NE(a.logs[0].find("Setting attention block size to 480 tokens"), std::string::npos);
  // A page that does not fit exactly is padded.
  const auto p = vllm_align_hybrid_block_size(4096, 1966080 - 1000, 16, 16, false);
  EXPECT_EQ(p.block_size, 480);
  ASSERT_EQ(p.logs.size(), 2u);
  EXPECT_NE(p.logs[1].find("Padding mamba page size by"), std::string::npos);
  // MLA hybrids align to at least 128.
  EXPECT_EQ(vllm_align_hybrid_block_size(1152, 1966080, 16, 16, true).block_size, 1792);
  // Prefix-caching mode "all": multiple of lcm(chunk, align), mamba block follows.
  const auto all = vllm_align_hybrid_block_size(4096, 1966080, 16, 16, false, true, 256);
  EXPECT_EQ(all.block_size, 512);
  EXPECT_EQ(all.mamba_block_size, 512);
  // A block already large enough is kept (and the mamba page padded up to it).
  const auto big = vllm_align_hybrid_block_size(4096, 4096 * 100, 16, 128, false);
  EXPECT_EQ(big.block_size, 128);
  EXPECT_FALSE(big.raised);
  EXPECT_EQ(big.mamba_page_bytes, 128 * 4096);
  EXPECT_THROW(vllm_align_hybrid_block_size(0, 10, 16, 16, false), InvalidArgument);
}

TEST(VllmKvSpec, PageBytes) {
  LayerSpec s = standard(32, 8, 128);
  EXPECT_EQ(vllm_page_bytes("FLASH_ATTN", s, 16), 8 * 16 * 256 * 2);
  s.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_EQ(vllm_page_bytes("FLASH_ATTN", s, 16), 8 * 16 * 256);
  s.kv_cache_dtype = KvCacheDType::kNvfp4;
  EXPECT_EQ(vllm_page_bytes("FLASHINFER", s, 16), 8 * 16 * 2 * (64 + 8));
  LayerSpec m = deepseek_v3();
  EXPECT_EQ(vllm_page_bytes("FLASHINFER_MLA", m, 64), 64 * 576 * 2);
  m.mla->sparse = true;
  m.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  EXPECT_EQ(vllm_page_bytes("FLASHMLA_SPARSE", m, 64), 64 * 656);
}

}  // namespace
}  // namespace attnkit
