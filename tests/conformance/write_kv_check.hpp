// One write_kv call checked byte for byte against the quantizer (harness.hpp's encode_kv_row,
// docs/semantics.md §2): shared by the conformance suite's write_kv cells and the randomized test.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace attnkit::conformance {

struct WriteKvCase {
  DType dtype = DType::kBFloat16;
  KvCacheDType kv_dtype = KvCacheDType::kBFloat16;  // resolved; kAuto = fp32 storage
  bool per_head = false;                            // per-head fp8 scales
  bool mla = false;  // one latent row of head_size (V its leading head_size_v), no V tensor
  int num_kv_heads = 2, head_size = 128, head_size_v = 128, block_size = 16;
  int num_tokens = 7;
  double skip = 0;  // the share of tokens with slot -1 (padding); token num_tokens / 2 always
                    // when > 0
  // Input strides beyond packed, in elements: each head row padded, each token padded (a K or V
  // slice of a fused QKV buffer). The padding holds NaN, which must never reach the cache.
  int pad_head = 0, pad_token = 0;
  bool padded_cache = true;  // cache strides larger than packed (CaseConfig::padded_strides)
  float gain = 1.f;          // input magnitude (standard deviation 1.5 x gain)
  // fp8 and nvfp4 scales map the inputs' amax to this share of the format's range: above 1 the
  // conversion saturates, far below it underflows to subnormals and zero.
  float fill = 0.45f;
  int spare_blocks = 1;  // cache blocks beyond the tokens' need: slots no token writes keep poison
  uint64_t seed = 1;

  std::string describe() const {
    std::ostringstream o;
    o << to_string(dtype)
      << "/kv:" << (kv_dtype == KvCacheDType::kAuto ? "fp32" : to_string(kv_dtype))
      << (per_head ? "(per-head)" : "") << (mla ? " mla" : "") << " hkv" << num_kv_heads << " d"
      << head_size << "/" << head_size_v << " bs" << block_size << " tokens " << num_tokens
      << " skip " << skip << " pad " << pad_head << "/" << pad_token
      << (padded_cache ? " padded-cache" : "") << " gain " << gain << " fill " << fill << " seed "
      << seed;
    return o.str();
  }
};

// Returns "" when the backend's cache bytes (and nvfp4 block scales) equal the quantizer's,
// else what differs first.
inline std::string check_write_kv(AttentionBackend& backend, MemorySpace& memory,
                                  const WriteKvCase& w) {
  const int T = w.num_tokens, H = w.num_kv_heads, D = w.head_size, Dv = w.head_size_v;
  const int slots_needed = T + w.spare_blocks * w.block_size;
  CaseConfig cfg;
  cfg.dtype = w.dtype;
  cfg.kv_dtype = w.kv_dtype;
  cfg.scale_granularity = w.per_head ? ScaleGranularity::kPerHead : ScaleGranularity::kNone;
  cfg.num_kv_heads = cfg.num_heads = H;
  cfg.head_size = w.head_size;
  cfg.head_size_v = Dv;  // MLA: the leading part of the latent row
  cfg.mla = w.mla;
  cfg.block_size = w.block_size;
  cfg.padded_strides = w.padded_cache;
  cfg.seqs = {{1, std::max(slots_needed, 2 * w.block_size + 3)}};  // the cache geometry only
  cfg.seed = w.seed;
  HostCase hc = build_case(cfg);  // its cache contents and scales are replaced below

  // Inputs: random rows in the model dtype; NaN in every padding element.
  std::mt19937_64 rng(w.seed + 7);
  std::normal_distribution<float> normal(0.f, 1.5f * w.gain);
  const int64_t k_head = D + w.pad_head, k_tok = int64_t(H) * k_head + w.pad_token;
  const int64_t v_head = Dv + w.pad_head, v_tok = int64_t(H) * v_head + w.pad_token;
  const int ab = act_bytes(w.dtype);
  std::vector<uint8_t> k(size_t(std::max<int64_t>(1, T * k_tok)) * ab),
      v(size_t(std::max<int64_t>(1, T * v_tok)) * ab);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 0; i < int64_t(k.size()) / ab; ++i) encode_act(k.data(), w.dtype, i, nan);
  for (int64_t i = 0; i < int64_t(v.size()) / ab; ++i) encode_act(v.data(), w.dtype, i, nan);
  std::vector<float> amax(size_t(2 * H), 0.f);  // [tensor][head]
  for (int pass = 0; pass < (w.mla ? 1 : 2); ++pass) {
    std::vector<uint8_t>& buf = pass ? v : k;
    const int n = pass ? Dv : D;
    const int64_t head = pass ? v_head : k_head, tok = pass ? v_tok : k_tok;
    for (int t = 0; t < T; ++t)
      for (int g = 0; g < H; ++g)
        for (int d = 0; d < n; ++d) {
          const int64_t at = t * tok + g * head + d;
          encode_act(buf.data(), w.dtype, at, normal(rng));
          float& m = amax[size_t(pass * H + g)];
          m = std::max(m, float(std::fabs(decode_act(buf.data(), w.dtype, at))));
        }
  }
  // Scales from the inputs' amax (per head, or one per tensor).
  const bool nvfp4 = w.kv_dtype == KvCacheDType::kNvfp4;
  if (is_quantized(w.kv_dtype)) {
    const float fmax = nvfp4                                  ? kE2M1Max * kFp8E4M3Max
                       : w.kv_dtype == KvCacheDType::kFp8E4M3 ? kFp8E4M3Max
                                                              : kFp8E5M2Max;
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<float>& sc = pass ? hc.v_scale : hc.k_scale;
      for (size_t i = 0; i < sc.size(); ++i) {
        float a = 0.f;
        for (int g = 0; g < H; ++g)
          if (!w.per_head || g == int(i)) a = std::max(a, amax[size_t(pass * H + g)]);
        sc[i] = std::max(a, 1e-3f) / (w.fill * fmax);
      }
    }
  }

  // Distinct random slots; skipped tokens get -1.
  const int64_t slots = int64_t(hc.num_blocks) * w.block_size;
  std::vector<int64_t> perm(static_cast<size_t>(slots));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<int64_t> slot_mapping(static_cast<size_t>(std::max(1, T)), 0);
  for (int t = 0; t < T; ++t)
    slot_mapping[t] = w.skip > 0 && (t == T / 2 || unit(rng) < w.skip) ? -1 : perm[size_t(t)];

  // Poison the whole cache, then expect the quantizer's bytes at the written slots.
  const KvCacheDType rk = w.kv_dtype;
  std::fill(hc.k_cache.begin(), hc.k_cache.end(), kv_poison_byte(rk));
  std::fill(hc.v_cache.begin(), hc.v_cache.end(), kv_poison_byte(rk));
  std::fill(hc.k_bscales.begin(), hc.k_bscales.end(), 0x7f);
  std::fill(hc.v_bscales.begin(), hc.v_bscales.end(), 0x7f);
  HostCase want = hc;
  const KvCacheView view = want.kv_view();
  for (int t = 0; t < T; ++t) {
    if (slot_mapping[t] < 0) continue;
    const int64_t blk = slot_mapping[t] / w.block_size, o = slot_mapping[t] % w.block_size;
    for (int g = 0; g < H; ++g)
      for (int pass = 0; pass < (w.mla ? 1 : 2); ++pass) {
        const bool is_v = pass == 1;
        const int n = is_v ? Dv : D;
        const int64_t at = t * (is_v ? v_tok : k_tok) + g * (is_v ? v_head : k_head);
        std::vector<float> x(static_cast<size_t>(n));
        for (int d = 0; d < n; ++d)
          x[d] = float(decode_act(is_v ? v.data() : k.data(), w.dtype, at + d));
        uint8_t* row = static_cast<uint8_t*>(is_v ? view.v : view.k) +
                       blk * (is_v ? view.v_stride_block : view.stride_block) +
                       g * (is_v ? view.v_stride_head : view.stride_head) +
                       o * (is_v ? view.v_stride_token : view.stride_token);
        uint8_t* bsp = !nvfp4 ? nullptr
                       : is_v ? view.v_block_scales + blk * view.v_sb_block + g * view.v_sb_head +
                                    o * view.v_sb_token
                              : view.k_block_scales + blk * view.sb_block + g * view.sb_head +
                                    o * view.sb_token;
        const std::vector<float>& sc = is_v ? want.v_scale : want.k_scale;
        encode_kv_row(rk, x.data(), n, sc[w.per_head ? g : 0], row, bsp);
      }
  }

  // Run the backend's write_kv in its memory space.
  const DeviceKvCache cache(memory, hc);
  DeviceBuffer kin(memory, k), vin(memory, v), sm(memory, slot_mapping);
  KvWriteArgs a;
  a.k = kin.get();
  a.v = w.mla ? nullptr : vin.get();
  a.dtype = w.dtype;
  a.num_tokens = T;
  a.k_stride_token = k_tok;
  a.k_stride_head = k_head;
  a.v_stride_token = v_tok;
  a.v_stride_head = v_head;
  a.slot_mapping = sm.as<int64_t>();
  a.cache = cache.view;
  try {
    backend.write_kv(a, memory.stream());
    memory.synchronize();
  } catch (const std::exception& e) {
    return std::string("write_kv threw: ") + e.what();
  }
  // The first differing byte of each tensor, named by block, head, token and byte of the row.
  auto first_diff = [&](const char* what, const DeviceBuffer& got_buf,
                        const std::vector<uint8_t>& expect, int64_t s_block, int64_t s_head,
                        int64_t s_token) -> std::string {
    if (expect.empty()) return "";
    std::vector<uint8_t> got(expect.size());
    memory.copy_to_host(got.data(), got_buf.get(), got.size());
    const auto [gi, ei] = std::mismatch(got.begin(), got.end(), expect.begin());
    if (gi == got.end()) return "";
    const int64_t at = gi - got.begin();
    std::ostringstream o;
    o << what << " differ: block " << at / s_block << " head " << at % s_block / s_head << " token "
      << at % s_head / s_token << " byte " << at % s_token << ": got 0x" << std::hex << int(*gi)
      << ", expected 0x" << int(*ei);
    return o.str();
  };
  for (std::string p : {first_diff("K bytes", cache.k, want.k_cache, view.stride_block,
                                   view.stride_head, view.stride_token),
                        first_diff("V bytes", cache.v, want.v_cache, view.v_stride_block,
                                   view.v_stride_head, view.v_stride_token),
                        first_diff("K block scales", cache.kb, want.k_bscales, view.sb_block,
                                   view.sb_head, view.sb_token),
                        first_diff("V block scales", cache.vb, want.v_bscales, view.v_sb_block,
                                   view.v_sb_head, view.v_sb_token)})
    if (!p.empty()) return p;
  return "";
}

}  // namespace attnkit::conformance
