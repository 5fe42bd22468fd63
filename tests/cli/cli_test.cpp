// The attnkit CLI, run as a user would: plan / explain / backends outputs and exit codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fmt/format.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu_flash/cpu_flash_backend.hpp"
#include "cli_run.hpp"

namespace {

using attnkit_cli_test::CliResult;
using attnkit_cli_test::run_cli;
using attnkit_cli_test::slurp;
using attnkit_cli_test::TempConfig;

using ::testing::HasSubstr;
using ::testing::Not;

nlohmann::json plan_json(const std::string& args) {
  CliResult r = run_cli("plan --json " + args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// The attention rows `bench --device cpu <args>` prints (its ceiling and probe rows left out).
std::vector<nlohmann::json> cpu_bench_rows(const std::string& args) {
  const CliResult r = run_cli("bench --device cpu " + args);
  EXPECT_EQ(r.rc, 0) << r.err;
  std::vector<nlohmann::json> rows;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["kind"] != "ceiling" && j["kind"] != "probe") rows.push_back(std::move(j));
  }
  return rows;
}

TEST(CliPlan, Gemma2HasTwoGroupsOfTwentyOneLayers) {
  const auto j = plan_json("--model gemma-2-9b --device h100");
  ASSERT_EQ(j["groups"].size(), 2u);
  int windowed = 0, full = 0;
  for (const auto& g : j["groups"]) {
    EXPECT_EQ(g["layers"].size(), 21u);
    EXPECT_EQ(g["head_size"], 256);
    EXPECT_EQ(g["head_size_v"], 256);
    EXPECT_EQ(g["logits_soft_cap"], 50.0);
    EXPECT_EQ(g["backend"], "CUDA_FLASH");
    EXPECT_FALSE(g["variant"].get<std::string>().empty());
    // Gemma-2 slides on even layers (transformers: is_sliding = not layer_idx % 2).
    if (g["sliding_window"].is_null()) {
      ++full;
      EXPECT_EQ(g["layer_ranges"], "1-41 step 2");
    } else if (g["sliding_window"] == 4096) {
      ++windowed;
      EXPECT_EQ(g["layer_ranges"], "0-40 step 2");
    }
  }
  EXPECT_EQ(windowed, 1);
  EXPECT_EQ(full, 1);
  EXPECT_EQ(j["model"]["num_layers"], 42);

  // The text form says the same.
  CliResult r = run_cli("plan --model gemma-2-9b --device h100");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("42 layers; 42 attention layers in 2 groups"));
  EXPECT_THAT(r.out, HasSubstr("(21 layers)"));
  EXPECT_THAT(r.out, HasSubstr("4096 tokens"));
  EXPECT_THAT(r.out, HasSubstr("256 qk / 256 v"));
  EXPECT_THAT(r.out, HasSubstr("softcap         50"));
  EXPECT_THAT(r.out, HasSubstr("backend         CUDA_FLASH"));
  EXPECT_EQ(r.err, "");
}

TEST(CliPlan, DeepSeekV3IsMlaWithDecodeHeadSize576) {
  const auto j = plan_json("--model deepseek-v3 --device h100");
  ASSERT_GE(j["groups"].size(), 1u);
  for (const auto& g : j["groups"]) {
    ASSERT_FALSE(g["mla"].is_null());
    EXPECT_EQ(g["mla"]["decode_head_size"], 576);
    EXPECT_EQ(g["head_size"], 576);
    EXPECT_EQ(g["backend"], "CUDA_MLA");
  }
  CliResult r = run_cli("plan --model deepseek-v3 --device h100");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("decode head size 576"));
}

// DeepseekV3Config defaults the MLA dims: the bundled config without them still plans as MLA
// (before, as 128-head MHA of head size 56, which no CUDA backend runs).
TEST(CliPlan, DeepSeekV3WithoutMlaKeysIsStillMla) {
  std::ifstream in(std::string(ATTNKIT_SOURCE_DIR) + "/models/deepseek-v3.json");
  nlohmann::json cfg = nlohmann::json::parse(in);
  for (const char* k :
       {"kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
    cfg.erase(k);
  const TempConfig file("ds_no_mla", cfg.dump());
  const auto j = plan_json("--model " + file.path.string() + " --device h100");
  ASSERT_EQ(j["groups"].size(), 1u);
  const auto& g = j["groups"][0];
  EXPECT_EQ(g["num_kv_heads"], 1);
  EXPECT_EQ(g["head_size"], 576);
  EXPECT_EQ(g["head_size_v"], 512);
  ASSERT_FALSE(g["mla"].is_null());
  EXPECT_EQ(g["mla"]["q_lora_rank"], 1536);
  EXPECT_EQ(g["backend"], "CUDA_MLA");
}

TEST(CliPlan, InvalidExplicitBackendExitsThreeWithReasons) {
  CliResult r = run_cli("plan --model llama-3.1-8b --device cpu --backend CUDA_FLASH");
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("error: Selected backend CUDA_FLASH is not valid"));
  EXPECT_THAT(r.err, HasSubstr("platform cpu not supported"));
  EXPECT_THAT(r.err,
              HasSubstr("Backends that would work for this layer: [CPU_FLASH, CPU_REFERENCE]"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
  // Names are case-insensitive; the flag wins over the environment.
  r = run_cli("plan --model llama-3.1-8b --device cpu --backend cpu_reference");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("CPU_REFERENCE (explicit choice)"));
}

TEST(CliPlan, EnvironmentBackendIsUsedUnlessTheFlagSaysOtherwise) {
  const std::string env = "env ATTNKIT_ATTENTION_BACKEND=cpu_reference ";
  auto run = [&](const std::string& args) {
    const std::string cmd = env + ATTNKIT_CLI_PATH + " " + args + " 2>/dev/null";
    FILE* f = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    pclose(f);
    return out;
  };
  EXPECT_THAT(run("plan --model llama-3.1-8b --device cpu"), HasSubstr("CPU_REFERENCE (explicit"));
  EXPECT_THAT(run("plan --model llama-3.1-8b --device cpu --backend auto"),
              HasSubstr("CPU_FLASH (first valid"));
}

TEST(CliPlan, BadInputExitsTwo) {
  for (const char* args :
       {"plan --model llama-3.1-8b --device h300",
        "plan --model llama-3.1-8b --device h100 --backend NOPE",
        "plan --model llama-3.1-8b --device h100 --kv-cache-dtype int4",
        "plan --model llama-3.1-8b --device h100 --dtype fp64",
        "plan --model llama-3.1-8b --device h100 --variant v9",
        // An unknown variant on every device (before: "ignored" with a warning off CUDA).
        "plan --model llama-3.1-8b --device cpu --variant v9",
        "plan --stack vllm --model llama-3.1-8b --device cpu --variant v9",
        "run --model qwen3-0.6b --device cpu --variant v7 --quiet --requests 1 --prompt-len 4 "
        "--decode-steps 1",
        "plan --model llama-3.1-8b --device h100 --block-size 0",
        "plan --model no-such-model --device h100", "plan --device h100",
        "plan --model llama-3.1-8b --bogus", "frobnicate", "bench --device cpu --splits 4",
        "bench --device cpu --decode-head 100"}) {
    CliResult r = run_cli(args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.err;
    EXPECT_THAT(r.err, testing::StartsWith("error: ")) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  }
  CliResult r = run_cli("plan --model llama-3.1-8b --device h300");
  EXPECT_THAT(r.err, HasSubstr("device 'h300' is unknown"));
  r = run_cli("plan --model llama-3.1-8b --device h100 --backend NOPE");
  EXPECT_THAT(r.err, HasSubstr("CPU_REFERENCE, CPU_FLASH, CUDA_FLASH, CUDA_MLA"));
}

// Integer values are decimal whatever their leading zeros: CLI11's conversion (base 0) had read
// "--requests 010" as 8 requests and refused "08"; hex stays accepted where it was.
TEST(CliRun, IntegersWithLeadingZerosAreDecimal) {
  const std::string run =
      "run --model qwen3-0.6b --device cpu --prompt-len 4 --decode-steps 1 "
      "--quiet --json ";
  for (const auto& [args, requests] : std::vector<std::pair<std::string, int>>{
           {"--requests 010", 10},
           {"--requests=010", 10},
           {"--requests 08", 8},
           {"--requests 3 --seed 0x10", 3},
           {"--requests 0002 --max-tokens-per-step 0016", 2}}) {
    const CliResult r = run_cli(run + args);
    ASSERT_EQ(r.rc, 0) << args << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["prefill_tokens"], 4 * requests) << args;
  }
  const CliResult zero = run_cli(run + "--requests 000");
  EXPECT_EQ(zero.rc, 2) << zero.err;
  EXPECT_THAT(zero.err, HasSubstr("got 0, 4, 1"));
  const CliResult plan = run_cli("plan --model qwen3-0.6b --device cpu --block-size 016");
  EXPECT_EQ(plan.rc, 0) << plan.err;
  EXPECT_THAT(plan.out, HasSubstr("block size      16 (pinned)"));
}

// --seed fills a uint64_t: a negative or too large value is refused by name (before, "-1" wrapped
// to 2^64 - 1 and anything past it saturated, and the run went ahead).
TEST(CliRun, SeedOutOfRangeExitsTwo) {
  const std::string run =
      "run --model qwen3-0.6b --device cpu --requests 1 --prompt-len 4 "
      "--decode-steps 1 --quiet --seed ";
  for (const char* seed : {"-1", "18446744073709551616", "99999999999999999999999"}) {
    const CliResult r = run_cli(run + seed);
    EXPECT_EQ(r.rc, 2) << seed << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(std::string("--seed: expected an integer from 0 to "
                                             "18446744073709551615, got '") +
                                 seed + "'"));
    EXPECT_EQ(r.out, "") << seed;
  }
  const CliResult top = run_cli(run + "18446744073709551615");
  EXPECT_EQ(top.rc, 0) << top.err;
}

// run and plan check --block-size with the same range (before, run let the library refuse -1
// with no upper limit, and took 2000000).
TEST(CliRun, BlockSizeRangeIsPlans) {
  const std::string run =
      "run --model qwen3-0.6b --device cpu --requests 1 --prompt-len 4 --decode-steps 1 --quiet";
  const std::string plan = "plan --model qwen3-0.6b --device cpu";
  for (const char* bs : {"-1", "0", "1048577", "2000000"}) {
    const CliResult r = run_cli(run + " --block-size " + bs);
    const CliResult p = run_cli(plan + " --block-size " + bs);
    EXPECT_EQ(r.rc, 2) << bs << "\n" << r.err;
    EXPECT_EQ(p.rc, 2) << bs << "\n" << p.err;
    EXPECT_THAT(r.err,
                HasSubstr(std::string("--block-size: Value ") + bs + " not in range 1 to 1048576"));
    EXPECT_EQ(r.err, p.err) << bs;
  }
}

// bench's choices match any case and reach the command as their canonical spelling: a CPU run
// that names a CUDA-only option in capitals is refused like the lower-case one, and "--device
// CPU --suite MIXED" reaches the mixed rule (before, "CUDA" passed the check and then ran the CPU
// suite, and "FP8_E4M3" benchmarked a bf16 cache).
// --splits 0 is the plan's own count (the default), so a sweep can list it; 129 is out of range.
TEST(CliBench, SplitsZeroIsThePlansCount) {
  CliResult r = run_cli("bench --device cpu --suite mixed --splits 0");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--suite mixed benchmarks CUDA kernels"));  // parsed, then this
  r = run_cli("bench --device cuda --splits 129");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--splits"));
}

TEST(CliBench, ChoicesAreCaseInsensitive) {
  CliResult r = run_cli("bench --device CPU --suite MIXED");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--suite mixed benchmarks CUDA kernels"));
  r = run_cli("bench --device cpu --suite prefill --prefill-kv FP8_E4M3");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--prefill-kv, --prefill-image, --prefill-heads and --pool "
                               "apply to --device cuda only"));
  r = run_cli("bench --device cpu --suite prefill --prefill-image 256");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--pool apply to --device cuda only"));
  r = run_cli("bench --device cpu --suite prefill --prefill-heads 160");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--pool apply to --device cuda only"));
  r = run_cli("bench --device cuda --prefill-heads 64,112");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--prefill-heads takes head sizes (qk/v pairs) CUDA_FLASH builds "
                               "(64, 80, 96, 128, 160, 192, 224, 256, 192/128, 512); got '112'"));
  for (const char* bad : {"128/192", "192/", "/128", "192/128/64"}) {
    r = run_cli(std::string("bench --device cuda --prefill-heads ") + bad);
    EXPECT_EQ(r.rc, 2) << bad << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(std::string("got '") + bad + "'")) << bad;
  }
  r = run_cli("bench --device cpu --suite decode --decode-chunk 8192");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--decode-chunk, --mla-form"));
  r = run_cli("bench --device cpu --suite decode --decode-occupancy OWN");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--mla-form, --decode-occupancy"));
  r = run_cli("bench --device cpu --suite decode --early-copies NEVER");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--decode-occupancy, --early-copies, --variant"));
  r = run_cli("bench --device cuda --suite decode --early-copies sometimes");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--early-copies"));
  r = run_cli("bench --device cpu --suite MIXED --prefill-kv BFLOAT16 --variant AUTO");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--suite mixed benchmarks CUDA kernels"));
  r = run_cli("bench --device cpu --suite ENCODER");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--suite encoder benchmarks CUDA kernels"));
}

// --decode-grid, --decode-heads, --decode-head and --decode-q shape the CPU bench's decode rows
// too: each shape over a bf16 and an fp8 cache, ragged batches included, every row verified
// against the reference; head sizes CPU_FLASH does not run, and the prefill suite, are refused.
TEST(CliBench, CpuDecodeRowsFollowTheGrid) {
  std::vector<std::string> rows;
  for (const auto& j : cpu_bench_rows("--suite decode --quick --decode-grid 2x300,1x97+2x54 "
                                      "--decode-heads 8/2,6/6 --decode-head 96 --decode-q 2")) {
    EXPECT_EQ(j["kind"], "decode");
    EXPECT_EQ(j["q_len"], 2);
    EXPECT_EQ(j["head_size"], 96);
    EXPECT_TRUE(j["verified"].get<bool>()) << j.dump();
    // Q.K^T and P.V over each (query, key) pair the causal mask lets through: two tokens over n
    // keys see 2n - 1 (not half of 2n, the prefill rows' convention).
    const double pairs = j.contains("batch_lens") ? (2 * 97 - 1) + 2 * (2 * 54 - 1) : 2 * 599;
    const double flops = 2.0 * j["heads"].get<int>() * pairs * (96 + 96);
    EXPECT_NEAR(j["gflops"].get<double>() * j["time_ms"].get<double>() * 1e6, flops, 1e-6 * flops)
        << j.dump();
    rows.push_back(fmt::format("{}x{}{} {}/{} {}", j["batch"].get<int>(), j["kv_len"].get<int>(),
                               j.value("batch_lens", std::string()), j["heads"].get<int>(),
                               j["kv_heads"].get<int>(), j["kv_dtype"].get<std::string>()));
  }
  EXPECT_THAT(rows,
              testing::ElementsAre("2x300 8/2 bfloat16", "2x300 8/2 fp8_e4m3", "2x300 6/6 bfloat16",
                                   "2x300 6/6 fp8_e4m3", "3x971x97+2x54 8/2 bfloat16",
                                   "3x971x97+2x54 8/2 fp8_e4m3", "3x971x97+2x54 6/6 bfloat16",
                                   "3x971x97+2x54 6/6 fp8_e4m3"));
  CliResult bad = run_cli("bench --device cpu --suite decode --decode-head 100");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_THAT(bad.err, HasSubstr("--decode-head on the cpu takes the head sizes CPU_FLASH runs "
                                 "(16..576 step 16); got 100"));
  bad = run_cli("bench --device cpu --suite prefill --decode-q 2");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_THAT(bad.err, HasSubstr("--suite prefill runs none"));
  bad = run_cli("bench --device cpu --decode-grid 2x");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_THAT(bad.err, HasSubstr("'2x' is not BATCHxCONTEXT"));
}

// The read ceiling tries each of its ways of reading (a plain loop of loads, prefetches ahead)
// and is the fastest of them, which the decode rows' paired passes then use.
TEST(CliBench, ReadCeilingIsItsFastestWay) {
  const CliResult r =
      run_cli("bench --device cpu --suite decode --quick --decode-grid 1x97 --decode-heads 2/1");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  int ceilings = 0, decodes = 0;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["kind"] == "decode") {
      ++decodes;
      EXPECT_GT(j["read_bw_paired_gbs"].get<double>(), 0.0) << j.dump();
    }
    if (j["kind"] != "ceiling" || j["name"] != "read_bw") continue;
    ++ceilings;
    const auto& ways = j["ways_gbs"];
    ASSERT_GE(ways.size(), 2u) << j.dump();
    ASSERT_TRUE(ways.contains("plain")) << j.dump();
    const std::string way = j["way"];
    ASSERT_TRUE(ways.contains(way)) << j.dump();
    EXPECT_EQ(j["gbs"].get<double>(), ways[way].get<double>());
    for (const auto& [name, gbs] : ways.items()) {
      EXPECT_GT(gbs.get<double>(), 0.0) << name;
      EXPECT_LE(gbs.get<double>(), j["gbs"].get<double>()) << name;
    }
  }
  EXPECT_EQ(ceilings, 1);
  EXPECT_EQ(decodes, 2);  // a bf16 and an fp8 cache
}

// --suite mla on the cpu: CPU_FLASH's MLA decode over a DeepSeek-V3 latent cache (576/512, V
// read from the K rows), 128 and 16 heads over bf16 and fp8 latents, ragged grids included,
// every row verified against the reference and held to the GEMM rate; the options that shape
// the decode rows are refused there.
TEST(CliBench, CpuMlaRows) {
  std::vector<std::string> rows;
  for (const auto& j : cpu_bench_rows("--suite mla --quick --decode-grid 1x97+1x5")) {
    EXPECT_EQ(j["kind"], "mla_decode");
    EXPECT_EQ(j["head_size"], 576);
    EXPECT_EQ(j["head_size_v"], 512);
    EXPECT_EQ(j["kv_heads"], 1);
    EXPECT_EQ(j["batch_lens"], "1x97+1x5");
    EXPECT_TRUE(j["verified"].get<bool>()) << j.dump();
    EXPECT_TRUE(j.contains("fraction_of_gemm")) << j.dump();
    rows.push_back(fmt::format("{} {}", j["heads"].get<int>(), j["kv_dtype"].get<std::string>()));
  }
  EXPECT_THAT(rows,
              testing::ElementsAre("128 bfloat16", "16 bfloat16", "128 fp8_e4m3", "16 fp8_e4m3"));
  for (const char* opt : {"--decode-heads 32/8", "--decode-head 64", "--decode-q 2"}) {
    const CliResult bad = run_cli(std::string("bench --device cpu --suite mla ") + opt);
    EXPECT_EQ(bad.rc, 2) << opt;
    EXPECT_THAT(bad.err, HasSubstr("the MLA rows are DeepSeek-V3's")) << opt;
  }
}

// The bench shuffles its block tables by default, each row from its own seed: --seed sets the
// first row's (each row takes the next, and says which it took), --sequential-blocks keeps each
// sequence's blocks in order. Every layout verifies. The cuda bench's rows do the same (GPU only).
TEST(CliBench, SeedAndBlockOrderAreOptions) {
  const std::string shape = "--suite decode --quick --decode-grid 1x97+2x54 --decode-heads 8/2";
  const auto seeds = [](const std::vector<nlohmann::json>& rows, const std::string& order) {
    std::vector<int> out;
    for (const auto& j : rows) {
      EXPECT_TRUE(j["verified"].get<bool>()) << j.dump();
      EXPECT_EQ(j["block_table"], order) << j.dump();
      out.push_back(j["seed"].get<int>());
    }
    return out;
  };
  EXPECT_THAT(seeds(cpu_bench_rows(shape), "shuffled"), testing::ElementsAre(1, 2));
  EXPECT_THAT(seeds(cpu_bench_rows(shape + " --seed 7"), "shuffled"), testing::ElementsAre(7, 8));
  EXPECT_THAT(seeds(cpu_bench_rows(shape + " --seed 7 --sequential-blocks"), "sequential"),
              testing::ElementsAre(7, 8));
  const CliResult bad = run_cli("bench --device cpu " + shape + " --seed -1");
  EXPECT_EQ(bad.rc, 2) << bad.err;
  // --pool (a cache larger than the batch's blocks) is the cuda bench's; below 1 it is refused.
  CliResult r = run_cli("bench --device cpu " + shape + " --pool 2");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--pool apply to --device cuda only"));
  r = run_cli("bench --device cuda --suite decode --pool 0.5");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--pool"));
}

// --interleave-isa: every row is also timed on the named CPU_FLASH variants in turn, each
// variant's output checked as the row's own. scalar and avx2 (where the CPU has it) run
// anywhere CI does; a variant that is not one, or that this CPU lacks, is refused with the ones
// it runs, and the cuda bench refuses the option.
TEST(CliBench, InterleaveIsaTimesEachVariantInTurn) {
  std::vector<std::string> want = {"scalar"};
  if (attnkit::cpu_flash::isa_supported(attnkit::cpu_flash::Isa::kAvx2)) want.push_back("avx2");
  std::string list;
  for (const auto& v : want) list += (list.empty() ? "" : ",") + v;
  int rows = 0;
  for (const auto& j : cpu_bench_rows(
           "--suite decode --quick --decode-grid 1x300 --decode-heads 8/2 --interleave-isa " +
           list)) {
    if (j["kind"] != "decode") continue;
    ++rows;
    ASSERT_TRUE(j.contains("interleaved_isa")) << j.dump();
    const auto& v = j["interleaved_isa"];
    EXPECT_EQ(v.size(), want.size()) << j.dump();
    for (const auto& name : want) {
      ASSERT_TRUE(v.contains(name)) << j.dump();
      EXPECT_TRUE(v[name]["verified"].get<bool>()) << j.dump();
      EXPECT_GT(v[name]["gbs"].get<double>(), 0.0) << j.dump();
    }
  }
  EXPECT_EQ(rows, 2);  // the bf16 and fp8 caches
  CliResult bad = run_cli("bench --device cpu --suite decode --quick --interleave-isa avx9");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_THAT(bad.err, HasSubstr("--interleave-isa takes CPU_FLASH variants this CPU runs "
                                 "(scalar"));
  EXPECT_THAT(bad.err, HasSubstr("got 'avx9'"));
  bad = run_cli("bench --device cuda --suite decode --interleave-isa scalar");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_THAT(bad.err, HasSubstr("--interleave-isa applies to --device cpu only"));
}

TEST(CliPlan, NoNativeBackendOnRocmExitsThreeListingEveryBackend) {
  CliResult r = run_cli("plan --model llama-3.1-8b --device mi300x");
  EXPECT_EQ(r.rc, 3);
  for (const char* b : {"CPU_REFERENCE", "CPU_FLASH", "CUDA_FLASH", "CUDA_MLA"})
    EXPECT_THAT(r.err, HasSubstr(b));
  EXPECT_THAT(r.err, HasSubstr("platform rocm not supported"));
}

TEST(CliPlan, OptionsReachTheLayers) {
  auto j = plan_json("--model llama-3.1-8b --device h100 --kv-cache-dtype fp8 --block-size 32");
  ASSERT_EQ(j["groups"].size(), 1u);
  EXPECT_EQ(j["groups"][0]["kv_cache_dtype"], "fp8_e4m3");
  EXPECT_EQ(j["groups"][0]["block_size"], 32);
  j = plan_json("--model llama-3.1-8b --device cpu --dtype float32");
  EXPECT_EQ(j["groups"][0]["dtype"], "float32");
  EXPECT_EQ(j["groups"][0]["backend"], "CPU_FLASH");
  j = plan_json("--model llama-3.1-8b --device b200 --variant v3");
  const auto& w = j["groups"][0]["warnings"];
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0]["message"].get<std::string>(), HasSubstr("need compute capability 9.0"));
  EXPECT_EQ(j["groups"][0]["variant"], "v2");
}

// --kv-cache-dtype-skip-layers keeps the layers it names at the model dtype (vLLM's
// kv_cache_dtype_skip_layers): a mixed-precision cache, so zeroing is on. Refused with the vllm
// stack (its heterogeneous alignment is not modelled) and without a quantized dtype (exit 2).
TEST(CliPlan, KvCacheDtypeSkipLayers) {
  const auto j = plan_json(
      "--model gemma-2-9b --device h100 --kv-cache-dtype fp8 "
      "--kv-cache-dtype-skip-layers sliding_window,1");
  ASSERT_EQ(j["groups"].size(), 3u);  // sliding (bf16), layer 1 (bf16), the other full (fp8)
  for (const auto& g : j["groups"]) {
    const bool kept = g["sliding_window"].is_number() || g["layers"] == nlohmann::json({1});
    EXPECT_EQ(g["kv_cache_dtype"], kept ? "auto" : "fp8_e4m3") << g["layers"];
  }
  EXPECT_EQ(j["kv"]["needs_zeroing"], true);
  CliResult r = run_cli(
      "plan --model gemma-2-9b --device h100 --stack vllm --kv-cache-dtype fp8 "
      "--kv-cache-dtype-skip-layers sliding_window");
  EXPECT_EQ(r.rc, 3);
  EXPECT_THAT(r.err, HasSubstr("plan it with --stack native"));
  r = run_cli("plan --model gemma-2-9b --device h100 --kv-cache-dtype-skip-layers 3");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("needs another kv_cache_dtype"));
}

// A sliding window holds its window plus one prefill chunk (what run allocates): a smaller
// --max-tokens-per-step leaves room for more tokens of a sequence in the same budget.
TEST(CliPlan, SlidingWindowsCountOneChunk) {
  const auto big = plan_json("--model gemma-3-1b-it --device cpu --memory 32MiB");
  const auto small =
      plan_json("--model gemma-3-1b-it --device cpu --memory 32MiB --max-tokens-per-step 128");
  EXPECT_EQ(big["kv"]["max_tokens_per_step"], 512);
  EXPECT_EQ(small["kv"]["max_tokens_per_step"], 128);
  EXPECT_EQ(small["kv"]["num_blocks"], big["kv"]["num_blocks"]);
  EXPECT_GT(small["kv"]["max_tokens"].get<int64_t>(), big["kv"]["max_tokens"].get<int64_t>());
  EXPECT_EQ(run_cli("plan --model gemma-3-1b-it --device cpu --max-tokens-per-step 0").rc, 2);
}

// A KV budget that holds no token of one request is refused like run refuses it (exit 3), after
// the plan under explain; one that holds short requests but no token of a max_model_len
// sequence (its window blocks come first) plans with a warning. Before, both printed "N blocks,
// 0 tokens" and exited 0. (No block counts for gemma-2: they follow how the KV plan reserves a
// window.)
TEST(CliPlan, KvBudgetTooSmall) {
  CliResult r = run_cli("plan --model qwen3-0.6b --device cpu --memory 1KiB");
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("error: KV budget of 1024 bytes (--memory 1KiB) holds 0 blocks of "
                               "1835008 bytes; one request of one token needs 2"));
  EXPECT_THAT(r.err, HasSubstr("expected at least 3670016 bytes"));
  r = run_cli("explain --json --model qwen3-0.6b --device cpu --memory 1KiB");
  EXPECT_EQ(r.rc, 3);
  const auto e = nlohmann::json::parse(r.out);
  EXPECT_EQ(e["kv"]["num_blocks"], 0);
  EXPECT_THAT(e["kv"]["error"].get<std::string>(), HasSubstr("one request of one token needs 2"));
  r = run_cli("explain --model qwen3-0.6b --device cpu --memory 3583KiB");  // one block short
  EXPECT_EQ(r.rc, 3);
  EXPECT_THAT(r.out, HasSubstr("  error: KV budget of 3668992 bytes (--memory 3583KiB) holds 1 "
                               "blocks"));
  EXPECT_TRUE(
      plan_json("--model qwen3-0.6b --device cpu --memory 3584KiB")["kv"]["error"].is_null());

  const auto w = plan_json("--model gemma-2-9b --device cpu --memory 162MiB");
  EXPECT_EQ(w["kv"]["num_blocks"], 61);
  EXPECT_EQ(w["kv"]["max_tokens"], 0);
  EXPECT_THAT(
      w["kv"]["warning"].get<std::string>(),
      HasSubstr("short requests fit, but no token of a sequence of max_model_len 8192 after "
                "its fixed window / state / encoder blocks; that needs "));
  r = run_cli("plan --model gemma-2-9b --device cpu --memory 162MiB");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  warning: KV budget of 169869312 bytes (--memory 162MiB)"));
  EXPECT_TRUE(
      plan_json("--model gemma-2-9b --device cpu --memory 2GiB")["kv"]["warning"].is_null());
}

TEST(CliExplain, ListsEveryBackendWithReasons) {
  CliResult r = run_cli("explain --model gemma-2-9b --device h100");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("CPU_REFERENCE  rejected: platform cuda not supported"));
  EXPECT_THAT(r.out, HasSubstr("CUDA_FLASH     valid, selected"));
  EXPECT_THAT(r.out, HasSubstr("CUDA_MLA       rejected:"));
  EXPECT_THAT(r.out, HasSubstr("Using CUDA_FLASH attention backend out of potential backends"));
  CliResult v = run_cli("plan --verbose --model gemma-2-9b --device h100");
  EXPECT_EQ(v.out, r.out);
  CliResult plain = run_cli("plan --model gemma-2-9b --device h100");
  EXPECT_THAT(plain.out, Not(HasSubstr("rejected:")));
  const auto j = plan_json("--verbose --model gemma-2-9b --device h100");
  ASSERT_EQ(j["groups"][0]["backends"].size(), 4u);
}

TEST(CliExplain, KeepsGoingAndExitsThreeWhenAGroupHasNoBackend) {
  CliResult r = run_cli("explain --model llama-3.1-8b --device xpu");
  EXPECT_EQ(r.rc, 3);
  EXPECT_THAT(r.out, HasSubstr("rejected: platform xpu not supported"));
  EXPECT_THAT(r.err, HasSubstr("error: No valid attention backend"));
}

// dtype auto: a float32 embedding checkpoint plans in float16 on a GPU (vLLM's rule for pooling
// models), through FLASH_ATTN in the vllm stack as vLLM runs it; the plan names both dtypes and
// says why. --dtype float32 keeps float32 and fails on the native CUDA stack with the dtypes that
// run.
TEST(CliPlan, DtypeAutoDowncastsFloat32Checkpoints) {
  for (const char* stack : {"native", "vllm"}) {
    const auto j =
        plan_json(std::string("--model snowflake-arctic-embed-m --device h100 --stack ") + stack);
    EXPECT_EQ(j["model"]["dtype"], "float16") << stack;
    EXPECT_EQ(j["model"]["config_dtype"], "float32") << stack;
    ASSERT_EQ(j["model"]["notes"].size(), 1u) << stack;
    EXPECT_THAT(j["model"]["notes"][0].get<std::string>(),
                HasSubstr("dtype auto runs the float32 checkpoint in float16 on cuda"));
    EXPECT_EQ(j["groups"][0]["backend"],
              std::string(stack) == "vllm" ? "FLASH_ATTN" : "CUDA_FLASH");
  }
  EXPECT_EQ(plan_json("--model t5-small --device h100")["model"]["dtype"], "bfloat16");
  EXPECT_EQ(plan_json("--model llama-3.2-1b --device h100")["model"]["config_dtype"], "bfloat16");
  CliResult r = run_cli("plan --model snowflake-arctic-embed-m --device h100 --dtype float32");
  EXPECT_EQ(r.rc, 3);
  EXPECT_THAT(r.err, HasSubstr("No backend of the cuda priority list runs float32"));
  r = run_cli("plan --model gemma-2-9b --device h100 --stack vllm --dtype float16");
  EXPECT_EQ(r.rc, 3);
  EXPECT_THAT(r.err, HasSubstr("model type 'gemma2' is numerically unstable in float16"));
}

// --runner: auto pools an encoder-only model and generates with a *ForCausalLM one; pooling a
// decoder shows in the plan and, for a float32 checkpoint, picks float16 as vLLM does; generate
// is refused for an encoder-only model, and an unknown runner is refused by name.
TEST(CliPlan, RunnerDecidesPoolingAndItsDtype) {
  auto arctic = plan_json("--model snowflake-arctic-embed-m --device h100");
  EXPECT_EQ(arctic["model"]["runner"], "pooling");
  EXPECT_EQ(arctic["model"]["runner_reason"], "encoder-only: model_type 'bert'");
  auto llama = plan_json("--model llama-3.2-1b --device h100");
  EXPECT_EQ(llama["model"]["runner"], "generate");
  EXPECT_EQ(llama["model"]["runner_reason"],
            "architecture LlamaForCausalLM, vLLM's default for *ForCausalLM");
  CliResult r = run_cli("plan --model llama-3.2-1b --device h100 --runner pooling");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("runner  pooling (--runner pooling)"));
  r = run_cli("plan --model modernbert-base --runner generate");
  EXPECT_EQ(r.rc, 3);
  EXPECT_THAT(r.err, HasSubstr("--runner generate does not apply"));
  r = run_cli("plan --model llama-3.2-1b --runner embed");
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.err, HasSubstr("runner 'embed' is not a runner; expected one of auto, generate, "
                               "pooling"));
}

// A model_type the reader does not know is planned the llama way, and the plan says so.
TEST(CliPlan, UnknownModelTypeIsPlannedWithANote) {
  const TempConfig file(
      "unknown_type", R"({"model_type":"brand_new_lm","hidden_size":2048,"torch_dtype":"bfloat16",)"
                      R"("num_attention_heads":16,"num_key_value_heads":4,"num_hidden_layers":2,)"
                      R"("max_position_embeddings":4096})");
  const std::string path = file.path;
  CliResult r = run_cli("plan --model " + path + " --device h100");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("model_type 'brand_new_lm' is not a model type attnkit knows"));
  EXPECT_THAT(r.err, HasSubstr("WARNING"));
  const auto j = plan_json("--model " + path + " --device h100");
  ASSERT_EQ(j["model"]["notes"].size(), 1u);
  EXPECT_THAT(j["model"]["notes"][0].get<std::string>(), HasSubstr("read the llama way"));
  EXPECT_TRUE(plan_json("--model llama-3.2-1b --device h100")["model"]["notes"].empty());
}

// Zamba2-2.7B's heads of 160: CUDA_FLASH builds them, so every stack plans it on a GPU; the CPU
// backends run them too.
TEST(CliPlan, Zamba2HeadsOf160) {
  const TempConfig file(
      "zamba2",
      R"({"architectures":["Zamba2ForCausalLM"],"model_type":"zamba2","hidden_size":2560,)"
      R"("num_attention_heads":32,"num_hidden_layers":54,"n_mamba_heads":80,"mamba_d_state":64,)"
      R"("mamba_d_conv":4,"mamba_expand":2,"mamba_ngroups":1,"num_mem_blocks":2,)"
      R"("max_position_embeddings":4096,"torch_dtype":"bfloat16"})");
  const std::string path = file.path;
  EXPECT_EQ(plan_json("--model " + path + " --device h100")["groups"][0]["backend"], "CUDA_FLASH");
  const auto vllm = plan_json("--model " + path + " --device h100 --stack vllm");
  EXPECT_EQ(vllm["groups"][0]["backend"], "FLASH_ATTN");
  EXPECT_EQ(plan_json("--model " + path + " --device cpu")["groups"][0]["backend"], "CPU_FLASH");
}

TEST(CliPlan, StateLayersAreCounted) {
  const auto j = plan_json("--model nemotron-3-nano-30b-a3b --device h100");
  EXPECT_GT(j["state_layers"].size(), 0u);
  CliResult r = run_cli("plan --model nemotron-3-nano-30b-a3b --device h100");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("23 mamba (layers 0, 2, 4, 7, 9, 11, 14,"));
}

TEST(CliHelp, EveryCommandHasHelp) {
  for (const char* args : {"--help", "plan --help", "explain --help", "backends --help"}) {
    CliResult r = run_cli(args);
    EXPECT_EQ(r.rc, 0) << args;
    EXPECT_THAT(r.out, HasSubstr("Usage")) << args;
  }
  CliResult r = run_cli("plan --help");
  for (const char* opt : {"--model", "--device", "--stack", "--kv-cache-dtype", "--dtype",
                          "--block-size", "--backend", "--variant", "--json", "--verbose"})
    EXPECT_THAT(r.out, HasSubstr(opt)) << opt;
  CliResult none = run_cli("");
  EXPECT_EQ(none.rc, 2);
  // --device's help names every preset, as the unknown-device error does (it lacked cpu-amx and
  // cpu-avx512).
  const CliResult unknown = run_cli("plan --model llama-3.1-8b --device h300");
  const std::string list = "expected auto, cuda or a preset: ";
  const size_t at = unknown.err.find(list);
  ASSERT_NE(at, std::string::npos) << unknown.err;
  std::string presets = unknown.err.substr(at + list.size());
  presets.erase(presets.find_last_not_of("\n") + 1);
  EXPECT_THAT(presets, HasSubstr("cpu-amx, cpu-avx512"));
  for (const char* cmd : {"plan --help", "explain --help"}) {
    // CLI11 wraps long descriptions: compare with the line breaks and indents folded.
    std::string help;
    for (char c : run_cli(cmd).out)
      if (c != '\n' && !(c == ' ' && !help.empty() && help.back() == ' ')) help += c;
    EXPECT_THAT(help, HasSubstr("auto (detect), cuda, or a preset: " + presets)) << cmd;
  }
}

TEST(CliBackends, MatrixFromTheDeclarations) {
  CliResult r = run_cli("backends");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* b : {"CPU_REFERENCE", "CPU_FLASH", "CUDA_FLASH", "CUDA_MLA"})
    EXPECT_THAT(r.out, HasSubstr(b));
  EXPECT_THAT(r.out, HasSubstr("generations"));
  CliResult md = run_cli("backends --markdown");
  ASSERT_EQ(md.rc, 0);
  EXPECT_THAT(md.out, HasSubstr("| backend | platforms |"));
  EXPECT_EQ(run_cli("backends --stack nope").rc, 2);
}

TEST(CliBackends, DocsBackendsMdIsUpToDate) {
  const std::filesystem::path doc = std::filesystem::path(ATTNKIT_SOURCE_DIR) / "docs/backends.md";
  ASSERT_TRUE(std::filesystem::exists(doc)) << doc;
  CliResult md = run_cli("backends --markdown");
  ASSERT_EQ(md.rc, 0) << md.err;
  EXPECT_TRUE(md.out == slurp(doc))
      << "docs/backends.md is stale: regenerate it with\n  attnkit backends --markdown > "
         "docs/backends.md";
}

}  // namespace

namespace {

// Issue 3's user-level checks through the CLI.
TEST(CliVllm, Gemma2OnBlackwellPinnedToFlashAttnFallsBackToFa2WithOneWarning) {
  const auto r = run_cli("plan --stack vllm --model gemma-2-9b --device b200 --backend FLASH_ATTN");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("FLASH_ATTN FA2"));
  const std::string warn = "FA4 on Blackwell is temporarily disabled for head_size=256";
  const size_t first = r.out.find(warn);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(warn, first + 1), std::string::npos) << "warned more than once";
  EXPECT_THAT(r.out, HasSubstr("as for group 1 (logged once)"));  // the second group
  const auto h100 =
      run_cli("plan --stack vllm --model gemma-2-9b --device h100 --backend FLASH_ATTN");
  ASSERT_EQ(h100.rc, 0) << h100.err;
  EXPECT_THAT(h100.out, HasSubstr("FLASH_ATTN FA3"));
  EXPECT_THAT(h100.out, Not(HasSubstr("warning")));
}

TEST(CliVllm, GptOssOnA100ExplainsWhyNotFlashAttn) {
  const auto r = run_cli("explain --stack vllm --model gpt-oss-20b --device a100");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("backend               FLASH_ATTN")));
  EXPECT_THAT(r.out, HasSubstr("sink not supported on compute capability < 9.0"));
}

TEST(CliVllm, MlaPrefillBackendDependsOnDims) {
  EXPECT_THAT(run_cli("plan --stack vllm --model glm-4.7-flash --device b200").out,
              HasSubstr("MLA prefill backend   TRTLLM_RAGGED"));
  EXPECT_THAT(run_cli("plan --stack vllm --model deepseek-v3 --device b200").out,
              HasSubstr("MLA prefill backend   FLASH_ATTN"));
}

TEST(CliVllm, BackendsMarkdownIsVllmsMatrix) {
  const auto r = run_cli("backends --stack vllm --markdown");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* b : {"FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLASHMLA", "CUTLASS_MLA"})
    EXPECT_THAT(r.out, HasSubstr(std::string("| ") + b)) << b;
}

}  // namespace
