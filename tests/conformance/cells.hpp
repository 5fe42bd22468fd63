// The conformance cells of a backend, generated from its capability declaration (never
// hand-listed): model dtype x KV dtype x head size x kernel block size x feature. Each cell
// becomes a LayerSpec (which the declaration must accept) and a CaseConfig with an awkward
// shape, rotating through the shapes the reliability notes ask for.
#pragma once

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "attnkit/capability.hpp"
#include "harness.hpp"

namespace attnkit::conformance {

enum class Feature {
  kCausal,             // plain decoder attention (bottom-right causal)
  kNonCausal,          // cross / encoder / encoder-only, per declared attention type
  kSlidingWindow,      // decoder with a Hugging Face window
  kEncoderOnlyWindow,  // non-causal symmetric window
  kAlibi,
  kSinks,
  kSoftcap,
  kPerHeadScales,  // fp8 caches with one scale per KV head
  kAsymmetricV,    // head_size_v != head_size
  kMlaDecode,      // latent cache, QK 576, V = first 512 of the row
  kCombined,       // every declared logit feature at once: pins their order (semantics §5)
  kMmPrefix,       // PrefixLM ranges (bidirectional multimodal tokens), with a window if declared
  kChunkedLocal,   // chunked local attention (Llama 4): keys of the query's own chunk
};

inline const char* to_string(Feature f) {
  switch (f) {
    case Feature::kCausal:
      return "causal";
    case Feature::kNonCausal:
      return "non-causal";
    case Feature::kSlidingWindow:
      return "sliding-window";
    case Feature::kEncoderOnlyWindow:
      return "encoder-only-window";
    case Feature::kAlibi:
      return "alibi";
    case Feature::kSinks:
      return "sinks";
    case Feature::kSoftcap:
      return "softcap";
    case Feature::kPerHeadScales:
      return "per-head-scales";
    case Feature::kAsymmetricV:
      return "asymmetric-v";
    case Feature::kMlaDecode:
      return "mla-decode";
    case Feature::kCombined:
      return "combined";
    case Feature::kMmPrefix:
      return "mm-prefix";
    case Feature::kChunkedLocal:
      return "chunked-local";
  }
  return "?";
}

struct Cell {
  DType dtype = DType::kBFloat16;
  KvCacheDType kv_dtype = KvCacheDType::kAuto;  // as declared (may be auto)
  int head_size = 128;
  int head_size_v = 128;
  int block_size = 16;
  Feature feature = Feature::kCausal;
  AttentionType attn_type = AttentionType::kDecoder;
  int window = 0;                   // HF sliding window when the feature has one
  int chunk = 0;                    // attention_chunk_size (kChunkedLocal)
  bool chunk_whole_blocks = false;  // the chunk stays a multiple of block_size (the backend's rule)
  bool alibi = false, sinks = false, softcap = false;  // set from the feature

  KvCacheDType resolved_kv() const { return resolve_kv_dtype(kv_dtype, dtype); }

  LayerSpec spec() const {
    LayerSpec s;
    s.num_heads = 8;
    s.num_kv_heads = feature == Feature::kMlaDecode ? 1 : 2;
    s.head_size = head_size;
    s.head_size_v = head_size_v;
    s.dtype = dtype;
    s.kv_cache_dtype = kv_dtype;
    s.kv_scale_granularity = feature == Feature::kPerHeadScales
                                 ? ScaleGranularity::kPerHead
                                 : default_granularity(resolved_kv());
    s.attn_type = attn_type;
    if (window > 0) s.sliding_window = window;
    s.alibi = alibi;
    s.sinks = sinks;
    if (softcap) s.logits_soft_cap = 5.0;
    if (feature == Feature::kMlaDecode) s.mla = MlaDims{512, 128, 64, 128, 1536, false};
    s.mm_prefix = feature == Feature::kMmPrefix;
    if (chunk > 0) s.attention_chunk_size = chunk;
    s.block_size = block_size;
    return s;
  }

  std::string describe() const {
    std::string s = std::string(attnkit::to_string(dtype)) +
                    " kv:" + std::string(attnkit::to_string(kv_dtype)) + " d" +
                    std::to_string(head_size) + "/" + std::to_string(head_size_v) + " bs" +
                    std::to_string(block_size) + " " + to_string(feature);
    if (feature == Feature::kNonCausal) s += "(" + std::string(attnkit::to_string(attn_type)) + ")";
    if (window > 0) s += " w" + std::to_string(window);
    if (chunk > 0) s += " c" + std::to_string(chunk);
    return s;
  }
};

// Head sizes to run: every size of an explicit list; for a range (or "any") a few, including
// the bounds, 128 and sizes that are not powers of two.
inline std::vector<int> representative_head_sizes(const HeadSizeRule& r) {
  if (!r.sizes.empty()) return r.sizes;
  std::vector<int> cand = {40, 72, 80, 96, 100, 200, 257, 48, 112, 160, 208, 320};
  std::vector<int> out;
  auto add = [&](int h) {
    if (h > 0 && r.accepts(h) && std::find(out.begin(), out.end(), h) == out.end())
      out.push_back(h);
  };
  const int step = std::max(1, r.multiple_of);
  int lo = r.min ? r.min : 16;
  lo = (lo + step - 1) / step * step;
  add(lo);
  if (r.max) add(r.max / step * step);
  add(128);
  int odd = 0;
  for (int h : cand) {
    if (odd == 2) break;
    if ((h & (h - 1)) != 0 && r.accepts(h) && std::find(out.begin(), out.end(), h) == out.end()) {
      out.push_back(h);
      ++odd;
    }
  }
  if (!r.max) add(257);  // unbounded: one truly odd size
  std::sort(out.begin(), out.end());
  return out;
}

// Kernel block sizes to run: MultipleOf(1) -> 1 and 16; MultipleOf(n) -> n and 2n; exact sizes.
inline std::vector<int> representative_block_sizes(const std::vector<BlockSizeEntry>& entries) {
  std::set<int> out;
  for (const auto& e : entries) {
    if (!e.multiple) {
      out.insert(e.value);
    } else if (e.value == 1) {
      out.insert(1);
      out.insert(16);
    } else {
      out.insert(e.value);
      out.insert(2 * e.value);
    }
  }
  return {out.begin(), out.end()};
}

inline bool contains_type(const Capabilities& c, AttentionType t) {
  return std::find(c.attn_types.begin(), c.attn_types.end(), t) != c.attn_types.end();
}

inline std::vector<KvCacheDType> declared_kv_dtypes(const Capabilities& c, DType model) {
  std::vector<KvCacheDType> all = c.kv_cache_dtypes;
  if (all.empty())
    all = {KvCacheDType::kAuto,    KvCacheDType::kFloat16, KvCacheDType::kBFloat16,
           KvCacheDType::kFp8E4M3, KvCacheDType::kFp8E5M2, KvCacheDType::kNvfp4};
  // `auto` is the model dtype's storage: keep it only when no explicit entry already is.
  std::vector<KvCacheDType> out;
  for (KvCacheDType d : all) {
    if (d == KvCacheDType::kAuto && resolve_kv_dtype(d, model) != KvCacheDType::kAuto &&
        std::find(all.begin(), all.end(), resolve_kv_dtype(d, model)) != all.end())
      continue;
    // fp32 storage exists only through auto for fp32 models.
    if (d != KvCacheDType::kAuto || model == DType::kFloat32 ||
        resolve_kv_dtype(d, model) != KvCacheDType::kAuto)
      out.push_back(d);
  }
  return out;
}

// Every declared cell. The caller drops any the declaration's combination rule refuses.
inline std::vector<Cell> enumerate_cells(const Capabilities& caps) {
  std::vector<Cell> cells;
  const std::vector<int> heads = representative_head_sizes(caps.head_sizes);
  const std::vector<int> blocks = representative_block_sizes(caps.kernel_block_sizes);
  std::vector<std::pair<int, int>> asym;
  for (auto p : caps.asymmetric_head_sizes)
    if (caps.head_sizes.accepts(p.first)) asym.push_back(p);
  if (caps.any_head_size_v)
    for (auto p : {std::pair<int, int>{192, 128}, std::pair<int, int>{64, 96}})
      if (caps.head_sizes.accepts(p.first) && std::find(asym.begin(), asym.end(), p) == asym.end())
        asym.push_back(p);
  const bool standard = caps.mla != MlaSupport::kMlaOnly;
  const bool mla = caps.mla != MlaSupport::kStandardOnly && caps.head_sizes.accepts(576);
  const AttentionType base_type =
      contains_type(caps, AttentionType::kDecoder) ? AttentionType::kDecoder : caps.attn_types[0];
  static const int kWindows[] = {1, 8, 17, 53, 97, 98};
  static const int kChunks[] = {16, 7, 32, 1, 50};
  int wi = 0, ci = 0;

  for (DType dt : caps.dtypes)
    for (KvCacheDType kv : declared_kv_dtypes(caps, dt))
      for (int bs : blocks) {
        Cell base;
        base.dtype = dt;
        base.kv_dtype = kv;
        base.block_size = bs;
        base.attn_type = base_type;
        const KvCacheDType rk = resolve_kv_dtype(kv, dt);
        const bool fp8 = rk == KvCacheDType::kFp8E4M3 || rk == KvCacheDType::kFp8E5M2;
        if (standard) {
          for (int hs : heads) {
            Cell c = base;
            c.head_size = c.head_size_v = hs;
            auto push = [&](Feature f, AttentionType t = AttentionType::kDecoder, int w = 0) {
              Cell x = c;
              x.feature = f;
              x.attn_type = f == Feature::kNonCausal || f == Feature::kEncoderOnlyWindow ||
                                    f == Feature::kChunkedLocal
                                ? t
                                : base_type;
              x.window = w;
              x.alibi = f == Feature::kAlibi || (f == Feature::kCombined && caps.alibi);
              x.sinks = f == Feature::kSinks || (f == Feature::kCombined && caps.sinks);
              x.softcap =
                  f == Feature::kSoftcap || (f == Feature::kCombined && caps.logits_soft_cap);
              cells.push_back(x);
            };
            push(Feature::kCausal);
            if (caps.non_causal)
              for (AttentionType t :
                   {AttentionType::kCross, AttentionType::kEncoder, AttentionType::kEncoderOnly})
                if (contains_type(caps, t)) push(Feature::kNonCausal, t);
            if (caps.sliding_window) push(Feature::kSlidingWindow, base_type, kWindows[wi++ % 6]);
            if (caps.sliding_window && caps.non_causal &&
                contains_type(caps, AttentionType::kEncoderOnly))
              push(Feature::kEncoderOnlyWindow, AttentionType::kEncoderOnly, kWindows[wi++ % 6]);
            if (caps.alibi) push(Feature::kAlibi);
            if (caps.sinks) push(Feature::kSinks);
            if (caps.logits_soft_cap) push(Feature::kSoftcap);
            if (caps.per_head_quant_scales && fp8) push(Feature::kPerHeadScales);
            if (int(caps.alibi) + int(caps.sinks) + int(caps.logits_soft_cap) +
                    int(caps.sliding_window) >=
                2)
              push(Feature::kCombined, base_type, caps.sliding_window ? kWindows[wi++ % 6] : 0);
            if (caps.mm_prefix && base_type == AttentionType::kDecoder)
              push(Feature::kMmPrefix, base_type, caps.sliding_window ? kWindows[wi++ % 6] : 0);
            // Non-causal rows (cross attention, encoder self-attention) also see the keys after
            // them: there the chunk bounds both sides (semantics §4).
            if (caps.chunked_local)
              for (AttentionType t :
                   {AttentionType::kDecoder, AttentionType::kCross, AttentionType::kEncoderOnly})
                if (contains_type(caps, t) && (t == AttentionType::kDecoder || caps.non_causal)) {
                  push(Feature::kChunkedLocal, t);
                  Cell& x = cells.back();
                  x.chunk = kChunks[ci++ % 5];
                  x.chunk_whole_blocks = caps.chunk_in_whole_blocks;
                  if (x.chunk_whole_blocks) x.chunk = std::max(bs, x.chunk / bs * bs);
                }
          }
          for (auto [qk, v] : asym) {
            Cell c = base;
            c.head_size = qk;
            c.head_size_v = v;
            c.feature = Feature::kAsymmetricV;
            cells.push_back(c);
          }
        }
        if (mla && contains_type(caps, AttentionType::kDecoder)) {
          Cell c = base;
          c.head_size = 576;
          c.head_size_v = 512;
          c.feature = Feature::kMlaDecode;
          c.attn_type = AttentionType::kDecoder;
          cells.push_back(c);
        }
      }
  return cells;
}

// Batch shapes, in the order cells rotate through them: decode, short prefill, chunked prefill,
// empty caches, empty query ranges, q_len > k_len, mixed batches.
inline const std::vector<std::vector<SeqShape>>& standard_shapes() {
  static const std::vector<std::vector<SeqShape>> k = {
      {{1, 54}},
      {{5, 97}, {1, 1}},
      {{1, 0}, {3, 54}},
      {{129, 463}},
      {{1, 523}, {1, 37}, {5, 18}},
      {{0, 17}, {5, 3}},
      {{7, 7}},
      {{5, 97}, {2, 54}},
      {{1, 97}, {129, 129}},
      {{2, 1}, {1, 54}, {5, 97}},
  };
  return k;
}
inline const std::vector<std::vector<SeqShape>>& long_shapes() {  // kv_len 1013, a few cells only
  static const std::vector<std::vector<SeqShape>> k = {{{1, 1013}}, {{5, 1013}, {1, 54}}};
  return k;
}
inline const std::vector<std::vector<SeqShape>>& decode_shapes() {  // MLA decode
  static const std::vector<std::vector<SeqShape>> k = {
      {{1, 54}}, {{1, 97}, {1, 1}}, {{1, 0}, {2, 54}}, {{1, 523}, {1, 37}}};
  return k;
}

// (num_kv_heads, group size): one KV head, GQA 1..8, 16, and non-powers of two.
inline const std::vector<std::pair<int, int>>& head_layouts() {
  static const std::vector<std::pair<int, int>> k = {{1, 1}, {2, 2}, {1, 3}, {2, 4},  {1, 5},
                                                     {1, 6}, {1, 7}, {1, 8}, {1, 16}, {3, 2}};
  return k;
}

inline double case_work(const CaseConfig& c) {
  double w = 0;
  for (auto& s : c.seqs) w += double(s.q_len) * s.k_len;
  return w * c.num_heads * (c.head_size + c.head_size_v);
}

// The case a cell runs as its `index`-th cell: shape and head layout rotate with the index; a
// shape whose work exceeds the budget is replaced by the next one, so long caches appear only on
// cheap cells and kv_len 1013 on every 40th cell. Every 7th cell runs with lse == nullptr.
inline CaseConfig case_for_cell(const Cell& cell, int index, uint64_t seed,
                                double work_budget = 4e6) {
  CaseConfig c;
  c.dtype = cell.dtype;
  c.kv_dtype = cell.resolved_kv();
  c.scale_granularity = cell.feature == Feature::kPerHeadScales ? ScaleGranularity::kPerHead
                                                                : ScaleGranularity::kNone;
  c.head_size = cell.head_size;
  c.head_size_v = cell.head_size_v;
  c.block_size = cell.block_size;
  c.seed = seed;
  c.padded_strides = index % 3 != 2;
  c.with_lse = index % 7 != 6;
  const bool self_attn =
      cell.attn_type == AttentionType::kEncoder || cell.attn_type == AttentionType::kEncoderOnly;
  c.causal = cell.attn_type == AttentionType::kDecoder;
  if (cell.feature == Feature::kMlaDecode) {
    c.mla = true;
    c.num_kv_heads = 1;
    c.num_heads = index % 2 ? 16 : 4;
  } else {
    auto [hkv, group] = head_layouts()[size_t(index * 7) % head_layouts().size()];
    c.num_kv_heads = hkv;
    c.num_heads = hkv * group;
  }
  const auto& shapes = c.mla ? decode_shapes() : standard_shapes();
  std::vector<std::vector<SeqShape>> order;
  if (index % 40 == 0 && !self_attn) order.push_back(long_shapes()[size_t(index / 40) % 2]);
  for (size_t k = 0; k < shapes.size(); ++k)
    order.push_back(shapes[(size_t(index) + k) % shapes.size()]);
  for (auto& shape : order) {
    c.seqs = shape;
    if (self_attn)  // encoder self-attention: queries are the keys (an empty side: both empty)
      for (auto& s : c.seqs)
        s.q_len = s.k_len = s.q_len == 0 || s.k_len == 0 ? 0 : std::max(s.k_len, s.q_len) % 150;
    const double budget = (index % 40 == 0) ? work_budget * 10 : work_budget;
    if (case_work(c) <= budget) break;
  }
  if (case_work(c) > work_budget * 10) {  // nothing fits: shrink heads
    c.num_kv_heads = 1;
    c.num_heads = std::min(c.num_heads, 2);
    c.seqs = {{1, 54}, {3, 97}};
  }
  if (cell.window > 0) {
    // A window w masks a key of some row only when w < k_len: narrow it below the shortest
    // cache (of more than one key) that has queries, so every window cell really masks.
    int w = cell.window;
    for (const SeqShape& s : c.seqs)
      if (s.q_len > 0 && s.k_len > 1) w = std::min(w, s.k_len - 1);
    c.window_left = w - 1;
    if (cell.feature == Feature::kEncoderOnlyWindow) c.window_right = w - 1;
  }
  c.alibi = cell.alibi;
  c.sinks = cell.sinks;
  c.mm_prefix = cell.feature == Feature::kMmPrefix;
  if (cell.chunk > 0) {
    // Like a window, a chunk masks only keys of caches longer than it: narrow it below the
    // shortest cache (of more than one key) that has queries.
    int chunk = cell.chunk;
    for (const SeqShape& s : c.seqs)
      if (s.q_len > 0 && s.k_len > 1) chunk = std::min(chunk, s.k_len - 1);
    if (cell.chunk_whole_blocks)
      chunk = std::max(cell.block_size, chunk / cell.block_size * cell.block_size);
    c.attention_chunk_size = chunk;
  }
  if (cell.softcap) {
    c.softcap = 5.f;
    c.q_gain = 4.f;  // logits well above the cap
  }
  return c;
}

// A cell the declaration does not cover, with the reason the selector must give.
struct UndeclaredCell {
  std::string what;
  LayerSpec spec;
  std::string reason;
};

inline std::vector<UndeclaredCell> undeclared_cells(const Capabilities& caps, const Cell& valid) {
  std::vector<UndeclaredCell> out;
  const LayerSpec base = valid.spec();
  auto add = [&](std::string what, LayerSpec s, std::string reason) {
    out.push_back({std::move(what), std::move(s), std::move(reason)});
  };
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16})
    if (std::find(caps.dtypes.begin(), caps.dtypes.end(), d) == caps.dtypes.end()) {
      LayerSpec s = base;
      s.dtype = d;
      if (s.kv_cache_dtype == KvCacheDType::kAuto) s.kv_cache_dtype = base.resolved_kv_dtype();
      add(std::string("dtype ") + std::string(attnkit::to_string(d)), s, "dtype not supported");
    }
  if (!caps.kv_cache_dtypes.empty())
    for (KvCacheDType d : {KvCacheDType::kFloat16, KvCacheDType::kBFloat16, KvCacheDType::kFp8E4M3,
                           KvCacheDType::kFp8E5M2, KvCacheDType::kNvfp4})
      if (std::find(caps.kv_cache_dtypes.begin(), caps.kv_cache_dtypes.end(), d) ==
          caps.kv_cache_dtypes.end()) {
        LayerSpec s = base;
        s.kv_cache_dtype = d;
        s.kv_scale_granularity = default_granularity(d);
        add(std::string("kv dtype ") + std::string(attnkit::to_string(d)), s,
            "kv_cache_dtype not supported");
      }
  for (int h : {8, 24, 40, 72, 100, 257, 1024, 2048})
    if (!caps.head_sizes.accepts(h)) {
      LayerSpec s = base;
      s.head_size = s.head_size_v = h;
      s.mla.reset();
      if (caps.mla == MlaSupport::kMlaOnly) s.mla = base.mla;  // keep the layer kind valid
      add("head size " + std::to_string(h), s, "head_size not supported");
      break;
    }
  for (int b : {3, 5, 8, 12, 24, 48})
    if (!block_size_supported(caps.kernel_block_sizes, b)) {
      LayerSpec s = base;
      s.block_size = b;
      add("block size " + std::to_string(b), s, "block_size not supported");
      break;
    }
  if (!caps.any_head_size_v && !base.is_mla()) {
    LayerSpec s = base;
    s.head_size_v = base.head_size / 2;
    if (std::find(caps.asymmetric_head_sizes.begin(), caps.asymmetric_head_sizes.end(),
                  std::pair<int, int>{s.head_size, s.head_size_v}) ==
        caps.asymmetric_head_sizes.end())
      add("head_size_v " + std::to_string(s.head_size_v), s, "head_size_v not supported");
  }
  if (!caps.sinks) {
    LayerSpec s = base;
    s.sinks = true;
    add("sinks", s, "attention sinks not supported");
  }
  if (!caps.alibi) {
    LayerSpec s = base;
    s.alibi = true;
    add("alibi", s, "ALiBi not supported");
  }
  if (!caps.logits_soft_cap) {
    LayerSpec s = base;
    s.logits_soft_cap = 30.0;
    add("softcap", s, "logits softcap not supported");
  }
  if (!caps.sliding_window) {
    LayerSpec s = base;
    s.sliding_window = 64;
    add("sliding window", s, "sliding window not supported");
  }
  if (!caps.non_causal) {
    LayerSpec s = base;
    s.attn_type = AttentionType::kCross;
    add("non-causal (cross)", s, "non-causal attention not supported");
  }
  for (AttentionType t : {AttentionType::kDecoder, AttentionType::kEncoder,
                          AttentionType::kEncoderOnly, AttentionType::kCross})
    if (!contains_type(caps, t)) {
      LayerSpec s = base;
      s.attn_type = t;
      add(std::string("attention type ") + std::string(attnkit::to_string(t)), s,
          std::string("attention type ") + std::string(attnkit::to_string(t)) + " not supported");
    }
  if (!caps.per_head_quant_scales) {
    LayerSpec s = base;
    s.kv_cache_dtype = KvCacheDType::kFp8E4M3;
    s.kv_scale_granularity = ScaleGranularity::kPerHead;
    add("per-head scales", s, "per-head quant scales not supported");
  }
  if (!caps.mm_prefix) {
    LayerSpec s = base;
    s.mm_prefix = true;
    add("mm_prefix", s, "partial multimodal token full attention not supported");
  }
  if (!caps.chunked_local) {
    LayerSpec s = base;
    s.attention_chunk_size = 8192;
    add("chunked local", s, "chunked local attention not supported");
  }
  if (caps.mla == MlaSupport::kStandardOnly) {
    LayerSpec s = base;
    s.head_size = 576;
    s.head_size_v = 512;
    s.num_kv_heads = 1;
    s.mla = MlaDims{512, 128, 64, 128, 1536, false};
    add("MLA", s, "MLA not supported");
  }
  if (caps.mla == MlaSupport::kMlaOnly) {
    LayerSpec s = base;
    s.mla.reset();
    add("non-MLA", s, "non-MLA not supported");
  }
  return out;
}

}  // namespace attnkit::conformance
