// The serving loop end to end on the CPU: every test runs real kernels and checks the sampled
// layers against CPU_REFERENCE.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "attnkit/error.hpp"
#include "attnkit/kv.hpp"
#include "attnkit/model.hpp"
#include "attnkit/runtime.hpp"

namespace attnkit {
namespace {

RunOptions small(std::string model) {
  RunOptions o;
  o.model = std::move(model);
  o.device = "cpu";
  o.requests = 2;
  o.prompt_len = 40;
  o.decode_steps = 3;
  o.max_tokens_per_step = 48;  // forces chunked prefill with prior context
  o.verify = true;
  return o;
}

// Runs o with a progress callback and checks it: steps 1, 2, ... against one total, which is the
// number of steps the run took.
RunReport run_with_progress(RunOptions o) {
  std::vector<std::pair<int, int>> calls;
  o.progress = [&](int step, int total, int, int) { calls.push_back({step, total}); };
  RunReport r = run_workload(o);
  EXPECT_EQ(int(calls.size()), r.steps);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].first, int(i) + 1);
    EXPECT_EQ(calls[i].second, r.steps) << "step " << calls[i].first;
  }
  return r;
}

// What `run` returns, or nothing when it asked for a GPU and this machine has none (the caller
// skips); every other error propagates.
std::optional<RunReport> unless_no_gpu(const std::function<RunReport()>& run) {
  try {
    return run();
  } catch (const InvalidArgument& e) {
    if (std::string(e.what()).find("no CUDA GPU was found") == std::string::npos) throw;
    return std::nullopt;
  }
}

void expect_verified(const RunReport& r) {
  EXPECT_TRUE(r.verified);
  EXPECT_TRUE(r.ok()) << format_run_report(r);
  for (const auto& g : r.groups) {
    EXPECT_GT(g.verified_layers, 0) << g.description;
    EXPECT_GT(g.seconds, 0) << g.description;
    EXPECT_LE(g.max_abs_error, g.tolerance) << g.description;
  }
}

TEST(RunWorkload, DefaultModelVerifiesAndCountsTokens) {
  RunOptions o = small("qwen3-0.6b");
  const RunReport r = run_with_progress(o);
  expect_verified(r);
  EXPECT_EQ(r.prefill_tokens, 80);
  EXPECT_EQ(r.decode_tokens, 6);
  EXPECT_GE(r.prefill_steps, 2);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].num_layers, 28);
  EXPECT_EQ(r.groups[0].query_tokens, 86);
}

TEST(RunWorkload, GemmaSlidingAndFullWithFp8AndSoftcap) {
  RunOptions o = small("gemma-2-9b");
  o.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  o.requests = 1;
  o.prompt_len = 24;
  const RunReport r = run_workload(o);
  expect_verified(r);
  ASSERT_EQ(r.groups.size(), 2u);  // sliding and full layers
  for (const auto& g : r.groups) EXPECT_NE(g.description.find("softcap 50"), std::string::npos);
}

TEST(RunWorkload, GptOssSinks) {
  RunOptions o = small("gpt-oss-20b");
  const RunReport r = run_workload(o);
  expect_verified(r);
  for (const auto& g : r.groups) EXPECT_NE(g.description.find("sinks"), std::string::npos);
}

// PaliGemma's prompts open with a 256-token image whose tokens see each other (PrefixLM). With a
// budget of 270 the second request's first chunk (240 tokens) would split the image in step 2:
// it waits for step 3. The first step's verified chunk holds queries inside the image, so a kernel
// ignoring the range fails verification.
TEST(RunWorkload, PaliGemmaImageTokensAttendBidirectionally) {
  RunOptions o = small("paligemma-3b-pt-224");
  o.prompt_len = 300;
  o.decode_steps = 2;
  o.max_tokens_per_step = 270;
  const RunReport r = run_with_progress(o);
  expect_verified(r);
  EXPECT_EQ(r.prefill_tokens, 600);
  EXPECT_EQ(r.prefill_steps, 4);  // 270 | 30 (the other request waits) | 269 | 31
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].backend, "CPU_FLASH");
  EXPECT_NE(r.groups[0].description.find("bidirectional image [0, 256)"), std::string::npos)
      << r.groups[0].description;
  o.max_tokens_per_step = 200;  // cannot hold one image
  try {
    run_workload(o);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("must be >= 256"), std::string::npos) << e.what();
  }
}

TEST(RunWorkload, HybridModelZeroesFreshBlocks) {
  RunOptions o = small("nemotron-3-nano-30b-a3b");
  o.requests = 1;
  const RunReport r = run_workload(o);
  expect_verified(r);
  EXPECT_TRUE(r.zeroing_on);
  EXPECT_GT(r.kv_blocks_zeroed, 0);
  EXPECT_EQ(r.state_layers, 23);
}

TEST(RunWorkload, ReferenceBackendCanBeChosenExplicitly) {
  RunOptions o = small("llama-3.2-1b");
  o.backend = "CPU_REFERENCE";
  o.prompt_len = 8;
  o.decode_steps = 1;
  const RunReport r = run_workload(o);
  expect_verified(r);
  EXPECT_EQ(r.groups[0].backend, "CPU_REFERENCE");
  // Checked against itself, the run says what the check covers.
  EXPECT_TRUE(r.groups[0].oracle_is_backend());
  EXPECT_NE(format_run_report(r).find("(the backend itself: this checks the cache's writes"),
            std::string::npos);
  EXPECT_FALSE(run_workload(small("llama-3.2-1b")).groups[0].oracle_is_backend());
}

// An encoder-only model (BERT): each request is one bidirectional pass over its prompt, K/V
// contiguous in the cu_seqlens_k form, whole prompts packed per step, no cache, no decode.
TEST(RunWorkload, EncoderOnlyModelRunsOnePassPerRequest) {
  RunOptions o = small("snowflake-arctic-embed-m");
  o.requests = 3;
  o.max_tokens_per_step = 96;  // two 40-token prompts a step
  for (auto kv : {std::optional<KvCacheDType>{}, std::optional{KvCacheDType::kFp8E4M3},
                  std::optional{KvCacheDType::kNvfp4}}) {
    o.kv_cache_dtype = kv;
    // The checkpoint's float32 (dtype auto would run this pooling model in float16).
    o.dtype = kv ? DType::kBFloat16 : DType::kFloat32;
    const RunReport r = run_workload(o);
    expect_verified(r);
    EXPECT_EQ(r.prefill_tokens, 120);
    EXPECT_EQ(r.decode_tokens, 0);
    EXPECT_EQ(r.steps, 2);
    EXPECT_EQ(r.kv_blocks_total, 0);
    ASSERT_EQ(r.groups.size(), 1u);
    const GroupRunReport& g = r.groups[0];
    EXPECT_EQ(g.backend, "CPU_FLASH");
    EXPECT_EQ(g.kv_group, -1);
    EXPECT_EQ(g.num_layers, 12);
    EXPECT_EQ(g.verified_layers, 2);  // the first and the last step
    EXPECT_NE(g.description.find("encoder_only"), std::string::npos) << g.description;
    // Every query sees all 40 keys of its prompt: 2 * 12 heads * (64 + 64) per pair.
    EXPECT_DOUBLE_EQ(g.flops, 2.0 * 12 * 128 * 40 * 40 * 3 * 12);
  }
  o.kv_cache_dtype.reset();
  o.dtype.reset();
  o.max_tokens_per_step = 39;  // a prompt cannot be split
  try {
    run_workload(o);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("must be >= --prompt-len (40)"), std::string::npos)
        << e.what();
  }
}

// T5: each request's 40-token prompt is its encoder input (one bidirectional pass of the 6
// encoder layers when it is admitted, two a step within the 96-token budget); the 6 cross-
// attention layers write its 40 encoder rows into the cross group once, and every decoder token
// (the start token, then 6 decodes) attends to all of them; the decoder's self-attention is
// causal over its own tokens. Every group verified against CPU_REFERENCE; the FLOPs count each
// kind's visible pairs. On the CPU in T5's float32 and on a GPU through CUDA_FLASH in bfloat16,
// what dtype auto makes of T5's float32 there.
void encoder_decoder_run(const std::string& device) {
  RunOptions o = small("t5-small");
  o.device = device;
  o.requests = 5;
  o.decode_steps = 6;
  o.max_tokens_per_step = 96;
  if (device == "cpu") o.dtype = DType::kFloat32;
  const std::optional<RunReport> run = unless_no_gpu([&] { return run_with_progress(o); });
  if (!run) GTEST_SKIP() << "needs a GPU; none present";
  const RunReport& r = *run;
  expect_verified(r);
  EXPECT_EQ(r.encoder_tokens, 5 * 40);
  EXPECT_EQ(r.prefill_tokens, 5);  // one start token a request
  EXPECT_EQ(r.decode_tokens, 5 * 6);
  EXPECT_EQ(r.steps, 9);  // two admissions a step: the last request joins at step 3
  EXPECT_NE(format_run_report(r).find("200 encoder + 5 prefill + 30 decode tokens"),
            std::string::npos)
      << format_run_report(r);
  ASSERT_EQ(r.groups.size(), 3u);
  const double per_pair = 2.0 * 8 * (64 + 64) * 6;  // 8 heads of 64, 6 layers a group
  for (const GroupRunReport& g : r.groups) {
    EXPECT_EQ(g.num_layers, 6) << g.description;
    EXPECT_NE(g.description.find("scale 1,"), std::string::npos) << g.description;
    if (g.description.find("encoder_decoder") != std::string::npos) {
      EXPECT_GE(g.kv_group, 0);
      EXPECT_DOUBLE_EQ(g.flops, per_pair * 35 * 40) << g.description;  // 7 queries x 5 requests
    } else if (g.description.find("encoder") != std::string::npos) {
      EXPECT_EQ(g.kv_group, -1);
      EXPECT_DOUBLE_EQ(g.flops, per_pair * 40 * 40 * 5) << g.description;
    } else {
      EXPECT_GE(g.kv_group, 0);
      EXPECT_DOUBLE_EQ(g.flops, per_pair * 28 * 5) << g.description;  // 1 + 2 + ... + 7 keys
    }
  }
}

// --kv-cache-dtype-skip-layers sliding_window: gemma-2's sliding layers keep bf16 caches, its
// full layers fp8. The cache is mixed-precision, so fresh blocks are zeroed (a block one group
// frees can reach the other, whose format would decode its stale bytes), and both verify.
void mixed_precision_run(const std::string& device) {
  RunOptions o = small("gemma-2-9b");
  o.device = device;
  o.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  o.kv_cache_dtype_skip_layers = parse_kv_skip_layers("sliding_window");
  const std::optional<RunReport> run = unless_no_gpu([&] { return run_workload(o); });
  if (!run) GTEST_SKIP() << "needs a GPU; none present";
  const RunReport& r = *run;
  expect_verified(r);
  EXPECT_TRUE(r.zeroing_on);
  EXPECT_GT(r.kv_blocks_zeroed, 0);
  ASSERT_EQ(r.groups.size(), 2u);
  for (const GroupRunReport& g : r.groups) {
    const bool sliding = g.description.find("window 4096") != std::string::npos;
    EXPECT_NE(g.description.find(sliding ? "kv bfloat16" : "kv fp8_e4m3"), std::string::npos)
        << g.description;
  }
}

TEST(RunWorkload, MixedPrecisionCacheFromSkipLayers) { mixed_precision_run("cpu"); }
TEST(RunWorkload, MixedPrecisionCacheFromSkipLayersOnCuda) { mixed_precision_run("cuda"); }

TEST(RunWorkload, EncoderDecoderModelRunsEncoderCrossAndDecoderLayers) {
  encoder_decoder_run("cpu");
}

// A Whisper-style config read the BART way, fp16 over an fp8 cache, with encoder heads twice the
// decoder's size (3 of 128 against 6 of 64): the encoder rows, the cross K/V writes and the
// decoder rows each take their own layer's shapes, and every group verifies.
TEST(RunWorkload, WhisperStyleEncoderDecoderOverFp8) {
  const std::filesystem::path cfg =
      std::filesystem::temp_directory_path() / "attnkit_whisper_style_test.json";
  {
    std::ofstream f(cfg);
    f << R"({"model_type":"whisper","d_model":384,"encoder_layers":2,"decoder_layers":2,)"
         R"("encoder_attention_heads":3,"decoder_attention_heads":6,"max_source_positions":1500,)"
         R"("max_target_positions":448,"is_encoder_decoder":true,"torch_dtype":"float16"})";
  }
  RunOptions o = small(cfg.string());
  o.requests = 3;
  o.prompt_len = 150;
  o.decode_steps = 5;
  o.max_tokens_per_step = 320;
  o.kv_cache_dtype = KvCacheDType::kFp8E4M3;
  const RunReport r = run_workload(o);
  expect_verified(r);
  EXPECT_EQ(r.encoder_tokens, 3 * 150);
  EXPECT_EQ(r.decode_tokens, 3 * 5);
  ASSERT_EQ(r.groups.size(), 3u);
  EXPECT_NE(r.groups[0].description.find("encoder heads 3/3, d128/128"), std::string::npos)
      << r.groups[0].description;
  EXPECT_NE(r.groups[2].description.find("encoder_decoder heads 6/6, d64/64"), std::string::npos)
      << r.groups[2].description;
  // A 4-token decoder prompt (Whisper's start-of-transcript tokens), prefilled as one chunk.
  o.decoder_prompt_len = 4;
  const RunReport r4 = run_workload(o);
  expect_verified(r4);
  EXPECT_EQ(r4.prefill_tokens, 3 * 4);
  EXPECT_EQ(r4.decode_tokens, 3 * 5);
  o.decoder_prompt_len = 0;
  EXPECT_THROW(run_workload(o), InvalidArgument);
  o.decoder_prompt_len.reset();
  o.prompt_len = 1501;  // past max_source_positions
  o.max_tokens_per_step = 2048;
  try {
    run_workload(o);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("at most 1500 tokens (max_source_positions)"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(cfg);
}
TEST(RunWorkload, EncoderDecoderModelRunsEncoderCrossAndDecoderLayersOnCuda) {
  encoder_decoder_run("cuda");
}

// ModernBERT: global layers and local ones whose queries see 64 keys on either side. Prompts of
// 200 tokens, so the window masks; each group's FLOPs count only the pairs it lets through.
TEST(RunWorkload, ModernBertLocalLayersSeeASymmetricWindow) {
  RunOptions o = small("modernbert-base");
  o.requests = 2;
  o.prompt_len = 200;
  o.max_tokens_per_step = 400;
  const RunReport r = run_workload(o);
  expect_verified(r);
  // dtype auto: a float32 pooling checkpoint runs in float16, as in vLLM.
  EXPECT_EQ(r.dtype, DType::kFloat16);
  EXPECT_NE(format_run_report(r).find("model modernbert-base in float16 on cpu"),
            std::string::npos);
  EXPECT_EQ(r.steps, 1);
  ASSERT_EQ(r.groups.size(), 2u);
  double local_pairs = 0;
  for (int p = 0; p < 200; ++p)
    for (int j = 0; j < 200; ++j) local_pairs += std::abs(p - j) <= 64;
  for (const GroupRunReport& g : r.groups) {
    const bool local = g.description.find("window ±64") != std::string::npos;
    EXPECT_EQ(g.num_layers, local ? 14 : 8) << g.description;
    const double pairs = local ? local_pairs : 200.0 * 200;
    EXPECT_DOUBLE_EQ(g.flops, 2.0 * 12 * 128 * pairs * 2 * g.num_layers) << g.description;
  }
}

// A Llama 4 text model shrunk to 32-token attention chunks (4 layers: three chunked, one NoPE
// layer full): prompts of 100 tokens in 48-token steps, then decodes across a chunk boundary.
// The chunked group releases each past chunk's blocks as the steps move on, so a kernel that read
// past its chunk would read the null block and fail verification; its FLOPs count each query's
// own chunk only. On the CPU backends, and on a GPU through CUDA_FLASH's chunk pieces.
void llama4_chunked_run(const std::string& device) {
  const std::filesystem::path cfg =
      std::filesystem::temp_directory_path() / "attnkit_llama4_chunked_test.json";
  {
    std::ofstream f(cfg);
    f << R"({"model_type":"llama4","text_config":{"model_type":"llama4_text","hidden_size":512,)"
         R"("num_attention_heads":8,"num_key_value_heads":2,"head_dim":64,"num_hidden_layers":4,)"
         R"("attention_chunk_size":32,"max_position_embeddings":4096,"torch_dtype":"bfloat16"}})";
  }
  RunOptions o = small(cfg.string());
  o.device = device;
  o.prompt_len = 100;
  o.decode_steps = 30;  // positions 100..129: the chunk boundary at 128
  std::optional<RunReport> run;
  try {
    run = unless_no_gpu([&] { return run_workload(o); });
  } catch (...) {
    std::filesystem::remove(cfg);
    throw;
  }
  std::filesystem::remove(cfg);
  if (!run) GTEST_SKIP() << "needs a GPU; none present";
  const RunReport& r = *run;
  expect_verified(r);
  ASSERT_EQ(r.groups.size(), 2u);
  double chunk_pairs = 0;
  for (int p = 0; p < 130; ++p) chunk_pairs += p % 32 + 1;  // keys C floor(p / C) .. p
  for (const GroupRunReport& g : r.groups) {
    const bool chunked = g.description.find("chunked local 32") != std::string::npos;
    EXPECT_EQ(g.num_layers, chunked ? 3 : 1) << g.description;
    const double pairs = chunked ? chunk_pairs : 130.0 * 131 / 2;
    EXPECT_DOUBLE_EQ(g.flops, 2.0 * 8 * 128 * pairs * 2 * g.num_layers) << g.description;
  }
}

TEST(RunWorkload, Llama4ChunkedLocalLayersSeeTheirChunk) { llama4_chunked_run("cpu"); }
TEST(RunWorkload, Llama4ChunkedLocalLayersSeeTheirChunkOnCuda) { llama4_chunked_run("cuda"); }

// A long causal prefill step is verified on a sample of its rows (every n-th of each sequence,
// the last included, each over the keys up to its position), and says so; short steps keep every
// row. A 3000-token prompt in one step over 8 heads: 72M (row, key, head) triples, over the
// oracle's bound of 2^24, so every 5th row; the decode steps check all of theirs.
TEST(RunWorkload, LongPrefillStepsVerifyASampleOfRows) {
  const std::filesystem::path cfg =
      std::filesystem::temp_directory_path() / "attnkit_long_prefill_test.json";
  {
    std::ofstream f(cfg);
    f << R"({"model_type":"llama","hidden_size":512,"num_attention_heads":8,)"
         R"("num_key_value_heads":2,"head_dim":64,"num_hidden_layers":1,)"
         R"("max_position_embeddings":8192,"torch_dtype":"bfloat16"})";
  }
  RunOptions o = small(cfg.string());
  o.requests = 1;
  o.prompt_len = 3000;
  o.decode_steps = 2;
  o.max_tokens_per_step = 4096;
  const RunReport r = run_workload(o);
  std::filesystem::remove(cfg);
  expect_verified(r);
  ASSERT_EQ(r.groups.size(), 1u);
  const GroupRunReport& g = r.groups[0];
  EXPECT_EQ(g.verified_rows_of, 3000 + 1);  // the prefill step and the last decode step
  EXPECT_EQ(g.verified_rows, 600 + 1);
  EXPECT_NE(format_run_report(r).find("(601 of their 3001 query rows)"), std::string::npos)
      << format_run_report(r);
}

// An fp32 config on a GPU: refused with the selector's reasons and the dtypes that would run.
TEST(RunWorkload, Float32ModelOnCudaNamesTheDtypesThatRun) {
  RunOptions o = small("snowflake-arctic-embed-m");
  o.device = "cuda";
  o.dtype = DType::kFloat32;  // asked for: dtype auto would run float16
  try {
    if (!unless_no_gpu([&] { return run_workload(o); }))
      GTEST_SKIP() << "needs a GPU; none present";
    ADD_FAILURE() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("No backend of the cuda priority list runs float32; "
                                         "they run float16, bfloat16"),
              std::string::npos)
        << e.what();
  }
}

// dtype auto on a GPU: the float32 embedding model runs in float16 through CUDA_FLASH, verified.
TEST(RunWorkload, Float32PoolingModelRunsInFloat16OnCuda) {
  RunOptions o = small("snowflake-arctic-embed-m");
  o.device = "cuda";
  const std::optional<RunReport> run = unless_no_gpu([&] { return run_workload(o); });
  if (!run) GTEST_SKIP() << "needs a GPU; none present";
  expect_verified(*run);
  EXPECT_EQ(run->dtype, DType::kFloat16);
  ASSERT_EQ(run->groups.size(), 1u);
  EXPECT_EQ(run->groups[0].backend, "CUDA_FLASH");
}

// A decoder run as a pooling model (--runner pooling; vLLM's default for a *Model architecture or
// a Sentence Transformers folder): chunked prefill through the paged cache, then each request
// ends; no decode step runs, and the report says why.
TEST(RunWorkload, PoolingDecoderEndsEachRequestWithItsPrefill) {
  RunOptions o = small("qwen3-0.6b");
  o.runner = Runner::kPooling;
  const RunReport r = run_with_progress(o);
  expect_verified(r);
  EXPECT_EQ(r.prefill_tokens, 80);
  EXPECT_EQ(r.decode_tokens, 0);
  EXPECT_GE(r.prefill_steps, 2);  // chunked: the later chunks read the earlier ones' keys
  EXPECT_EQ(r.dtype, DType::kBFloat16);
  EXPECT_NE(format_run_report(r).find("pooling model (--runner pooling): each request ends with "
                                      "its prefill, no decode step (--decode-steps 3 not run)"),
            std::string::npos)
      << format_run_report(r);
}

// On a GPU, steps whose decodes read at least 32 MiB beside a prefill chunk run as two parts
// (CudaFlashOptions::part_min_decode_bytes; qwen3-0.6b reads 4 KiB of K/V a key, so ~8200 decode
// keys a step) and verify; the last prefill step, verified, carries ~14 decodes of ~1000 keys.
TEST(RunWorkload, ChunkedPrefillStepsRunInPartsOnCuda) {
  RunOptions o = small("qwen3-0.6b");
  o.device = "cuda";
  o.requests = 16;
  o.prompt_len = 1000;
  o.decode_steps = 8;
  o.max_tokens_per_step = 2048;
  const std::optional<RunReport> run = unless_no_gpu([&] { return run_workload(o); });
  if (!run) GTEST_SKIP() << "needs a GPU; none present";
  const RunReport& r = *run;
  expect_verified(r);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_GT(r.groups[0].two_part_steps, 0) << format_run_report(r);
}

// gemma-3-1b-it: 512-token windows on five of every six layers. Its blocks are allocated chunk
// by chunk, and a sliding group releases the blocks below its window before each chunk, so one
// request of as many tokens as `plan` says fit a budget runs in that budget; admitted whole (every
// group holding the whole prompt) it needed several times the blocks.
TEST(RunWorkload, SlidingWindowsHoldTheirWindowAndOneChunk) {
  RunOptions o = small("gemma-3-1b-it");
  o.requests = 1;
  o.decode_steps = 2;
  o.max_tokens_per_step = 128;
  o.memory_bytes = uint64_t(32) << 20;
  KvPlanOptions kopt;
  kopt.max_tokens_per_step = o.max_tokens_per_step;
  kopt.memory_bytes = o.memory_bytes;
  const KvPlan plan = plan_kv_cache(load_model(o.model), {}, kopt);
  ASSERT_GT(plan.max_tokens, 2000);
  o.prompt_len = int(plan.max_tokens) - o.decode_steps;
  EXPECT_GT(plan.blocks_needed(plan.max_tokens) + 1, plan.num_blocks);  // whole prompts: no
  const RunReport r = run_workload(o);
  expect_verified(r);
  EXPECT_EQ(r.kv_blocks_total, plan.num_blocks);
  EXPECT_LE(r.kv_blocks_peak_used, plan.num_blocks - 1);  // the null block is never handed out
  o.prompt_len += 16;                                     // one block more than fits
  EXPECT_THROW(run_workload(o), OutOfMemory);
}

TEST(RunWorkload, BadInputsAreRefused) {
  RunOptions o = small("qwen3-0.6b");
  o.requests = 0;
  EXPECT_THROW(run_workload(o), InvalidArgument);
  o = small("t5-small");
  o.prompt_len = 49;  // an encoder input is one pass: it must fit the 48-token step
  EXPECT_THROW(run_workload(o), InvalidArgument);
  o = small("qwen3-0.6b");
  o.decoder_prompt_len = 4;  // a decoder-only model's prompt is --prompt-len
  EXPECT_THROW(run_workload(o), InvalidArgument);
  o = small("qwen3-0.6b");
  o.device = "h100";  // a planning preset, not hardware
  EXPECT_THROW(run_workload(o), InvalidArgument);
  o.device = "cpu-amx";  // so is a CPU preset (this machine may lack AMX)
  EXPECT_THROW(run_workload(o), InvalidArgument);
  o = small("qwen3-0.6b");
  o.backend = "CUDA_FLASH";
  EXPECT_THROW(run_workload(o), Unsupported);
  o = small("qwen3-0.6b");
  o.memory_bytes = 4096;  // not even one request
  EXPECT_THROW(run_workload(o), OutOfMemory);
  o.memory_bytes = uint64_t(1) << 50;  // more than this machine has: refused before allocating
  EXPECT_THROW(run_workload(o), OutOfMemory);
  o = small("qwen3-0.6b");
  o.prompt_len = 40960;  // its context is 40960 positions, the decode steps go past it
  EXPECT_THROW(run_workload(o), InvalidArgument);
}

}  // namespace
}  // namespace attnkit
