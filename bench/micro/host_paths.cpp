// Per-step host costs: a cached selection, block pool allocate/free, building block tables and
// slot mappings for a decode batch, and the CPU KV write. Run: attnkit_micro_bench.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "attnkit/kv.hpp"
#include "attnkit/model.hpp"
#include "attnkit/numeric.hpp"
#include "attnkit/selector.hpp"

namespace attnkit {
namespace {

void BM_CachedSelection(benchmark::State& state) {
  const ModelSpec m = load_model("llama-3.1-8b");
  Selector sel(catalog_for_stack("native"), device_from_name("h100"));
  for (auto _ : state)
    for (const auto& l : m.attention_layers) benchmark::DoNotOptimize(&sel.select(l));
  state.SetItemsProcessed(state.iterations() * int64_t(m.attention_layers.size()));
}
BENCHMARK(BM_CachedSelection);

void BM_BlockPoolAllocateFree(benchmark::State& state) {
  BlockPool pool(1 << 16);
  const int64_t n = state.range(0);
  for (auto _ : state) {
    auto blocks = pool.allocate(n);
    pool.free(blocks);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_BlockPoolAllocateFree)->Arg(1)->Arg(64);

// One decode step of 256 requests with 2k tokens each: append a token, then the block table rows
// and slot mapping the kernels need.
void BM_DecodeStepMetadata(benchmark::State& state) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const KvPlan plan = plan_kv_cache(m, {});
  const int requests = 256, context = 2048;
  KvCacheManager mgr(plan, requests * (context / 16 + 2) + 1, {.enable_prefix_caching = false});
  std::vector<int32_t> prompt(context, 7);
  std::vector<RequestId> ids;
  for (int r = 0; r < requests; ++r) {
    mgr.add_request(r, prompt);
    ids.push_back(r);
  }
  const int stride = context / 16 + 2;
  std::vector<int32_t> table(size_t(requests) * stride);
  int64_t steps = 0;
  for (auto _ : state) {
    if (steps++ == 16) {  // keep the cache bounded: restart the requests
      state.PauseTiming();
      for (RequestId id : ids) {
        mgr.free_request(id);
        mgr.add_request(id, prompt);
      }
      steps = 1;
      state.ResumeTiming();
    }
    for (RequestId id : ids) {
      const int32_t tok = 9;
      mgr.append_tokens(id, std::span<const int32_t>(&tok, 1));
      benchmark::DoNotOptimize(mgr.slot_mapping(id, 0, mgr.num_tokens(id) - 1, 1));
    }
    mgr.fill_block_tables(ids, 0, table.data(), stride);
  }
  state.SetItemsProcessed(state.iterations() * requests);
}
BENCHMARK(BM_DecodeStepMetadata);

// KV write of 512 tokens x 8 heads x 128 into a bf16 or fp8 cache.
void BM_WriteKvCpu(benchmark::State& state) {
  const auto dtype = state.range(0) ? KvCacheDType::kFp8E4M3 : KvCacheDType::kBFloat16;
  const int tokens = 512, heads = 8, d = 128, block = 16, blocks = tokens / block + 1;
  const int64_t elem = dtype == KvCacheDType::kBFloat16 ? 2 : 1;
  std::vector<uint8_t> k(size_t(blocks) * heads * block * d * elem), v(k.size());
  std::vector<uint16_t> src(size_t(tokens) * heads * d);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (auto& x : src) x = float_to_bf16_bits(normal(rng));
  std::vector<int64_t> slots(tokens);
  for (int t = 0; t < tokens; ++t) slots[size_t(t)] = t + block;  // skip block 0
  const float scale = 0.025f;
  KvWriteArgs a;
  a.k = a.v = src.data();
  a.dtype = DType::kBFloat16;
  a.num_tokens = tokens;
  a.k_stride_token = a.v_stride_token = int64_t(heads) * d;
  a.k_stride_head = a.v_stride_head = d;
  a.slot_mapping = slots.data();
  KvCacheView& c = a.cache;
  c.k = k.data();
  c.v = v.data();
  c.dtype = dtype;
  c.num_blocks = blocks;
  c.block_size = block;
  c.num_kv_heads = heads;
  c.head_size = c.head_size_v = d;
  c.stride_token = c.v_stride_token = d * elem;
  c.stride_head = c.v_stride_head = block * d * elem;
  c.stride_block = c.v_stride_block = int64_t(heads) * block * d * elem;
  if (dtype != KvCacheDType::kBFloat16) {
    c.scale_granularity = ScaleGranularity::kPerTensor;
    c.k_scale = c.v_scale = &scale;
  }
  for (auto _ : state) {
    write_kv_cpu(a);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * int64_t(src.size()) * 2 * 2);
}
BENCHMARK(BM_WriteKvCpu)->Arg(0)->Arg(1);

}  // namespace
}  // namespace attnkit

BENCHMARK_MAIN();
