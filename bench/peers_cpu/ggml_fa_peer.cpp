// llama.cpp's CPU flash attention (ggml_flash_attn_ext, the peer issue 5 quotes) on the shapes of
// `attnkit bench --device cpu`, one JSON line per shape. bench/peers_cpu.sh fetches ggml, builds
// this against it and runs it beside attnkit's bench in one command.
//
//   ggml_fa_peer [--threads N] [--repeats N] kind,B,Q,K,H,HKV,D,kv_type,causal ...
//
// kind: prefill | decode | mla_decode (D is DK/DV, e.g. 576/512: V is a view of the first DV
// elements of each K row, MLA's latent cache as llama.cpp reads it); kv_type: f16 | bf16 | f32 |
// q8_0 (ggml has no fp8: q8_0, 8.5 bits an element, is its 8-bit cache). K and V are contiguous
// per sequence ([D, K, HKV, B], ggml's layout; no paging), as llama.cpp keeps them. Q is fp32, as
// llama.cpp passes it; the accumulation precision is F32, as llama.cpp sets it.
// Figures: FLOPs 2*B*H*Q*K*(DK+DV) (halved for causal prefill), decode bytes the K and V bytes
// read (MLA: K only), median of the timed runs. Before a row counts, sampled output rows (the
// first and last sequence, head and query) are checked against an fp64 computation over the
// K/V values ggml holds (`rel_err`: max |err| / max |ref| over those rows; `verified` < 5e-2,
// since ggml sums f16 V rows in f16).
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"

namespace {

struct Shape {
  std::string kind;
  int64_t b, q, k, h, hkv, d, dv;  // dv < d: V is the first dv elements of each K row (MLA)
  std::string kv;
  bool causal;
};

Shape parse_shape(const std::string& text) {
  std::vector<std::string> f;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
    f.push_back(text.substr(start, comma - start));
  f.push_back(text.substr(start));
  if (f.size() != 9)
    throw std::invalid_argument("shape '" + text +
                                "': expected kind,B,Q,K,H,HKV,D,kv_type,causal (9 fields)");
  const size_t slash = f[6].find('/');
  const int64_t d = std::stoll(f[6].substr(0, slash));
  const int64_t dv = slash == std::string::npos ? d : std::stoll(f[6].substr(slash + 1));
  Shape s{f[0],
          std::stoll(f[1]),
          std::stoll(f[2]),
          std::stoll(f[3]),
          std::stoll(f[4]),
          std::stoll(f[5]),
          d,
          dv,
          f[7],
          f[8] == "1"};
  if (s.kind != "prefill" && s.kind != "decode" && s.kind != "mla_decode")
    throw std::invalid_argument("shape '" + text + "': kind must be prefill, decode or mla_decode");
  if (s.b < 1 || s.q < 1 || s.k < s.q || s.h < 1 || s.hkv < 1 || s.h % s.hkv != 0 || s.d < 1)
    throw std::invalid_argument("shape '" + text +
                                "': need B, Q, H, HKV, D >= 1, K >= Q and H a multiple of HKV");
  if ((s.kind == "mla_decode") != (s.dv < s.d) || s.dv < 1)
    throw std::invalid_argument("shape '" + text +
                                "': mla_decode takes DK/DV with 1 <= DV < DK; the others one D");
  return s;
}

ggml_type kv_type(const std::string& name) {
  if (name == "f16") return GGML_TYPE_F16;
  if (name == "bf16") return GGML_TYPE_BF16;
  if (name == "f32") return GGML_TYPE_F32;
  if (name == "q8_0") return GGML_TYPE_Q8_0;
  throw std::invalid_argument("kv_type '" + name + "': expected f16, bf16, f32 or q8_0");
}

// xorshift64*: uniform floats in [-1, 1), fast enough to fill caches of gigabytes.
struct Rng {
  uint64_t s;
  float next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return float((s * 0x2545F4914F6CDD1DULL) >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
};

// Rows of `n` random values (times `scale`) written in `type`, `rows_per_step` at a time.
void fill_rows(ggml_tensor* t, int64_t rows, int64_t n, float scale, Rng& rng) {
  std::vector<float> buf;
  const int64_t step = 4096;
  const size_t row_bytes = ggml_row_size(t->type, n);
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    const int64_t nr = std::min(step, rows - r0);
    buf.resize(size_t(nr * n));
    for (float& x : buf) x = rng.next() * scale;
    char* dst = static_cast<char*>(t->data) + size_t(r0) * row_bytes;
    switch (t->type) {
      case GGML_TYPE_F32:
        std::memcpy(dst, buf.data(), buf.size() * sizeof(float));
        break;
      case GGML_TYPE_F16:
        ggml_fp32_to_fp16_row(buf.data(), reinterpret_cast<ggml_fp16_t*>(dst), nr * n);
        break;
      case GGML_TYPE_BF16:
        ggml_fp32_to_bf16_row(buf.data(), reinterpret_cast<ggml_bf16_t*>(dst), nr * n);
        break;
      default:
        ggml_quantize_chunk(t->type, buf.data(), dst, 0, nr, n, nullptr);
    }
  }
}

// Row `row` (of out.size() values) of a tensor whose rows are contiguous, as fp32.
void row_f32(const ggml_tensor* t, int64_t row, std::vector<float>& out) {
  const int64_t n = int64_t(out.size());
  const char* src = static_cast<const char*>(t->data) + size_t(row) * ggml_row_size(t->type, n);
  if (t->type == GGML_TYPE_F32)
    std::memcpy(out.data(), src, size_t(n) * sizeof(float));
  else
    ggml_get_type_traits(t->type)->to_float(src, out.data(), n);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

void run_shape(const Shape& s, int threads, int repeats, ggml_threadpool* pool) {
  const ggml_type kt = kv_type(s.kv);
  const bool masked = s.causal && s.q > 1;
  const size_t kv_bytes = ggml_row_size(kt, s.d) * size_t(s.k * s.hkv * s.b);
  const bool latent = s.dv < s.d;
  const size_t data = size_t(s.d * s.q * s.h * s.b) * 8 /* q and out */ + 2 * kv_bytes +
                      (masked ? size_t(s.k * s.q) * 2 : 0);
  const size_t mem = data + 16 * ggml_tensor_overhead() + ggml_graph_overhead() + (64u << 20);
  const size_t huge = size_t(2) << 20;
  const size_t mem_rounded = (mem + huge - 1) / huge * huge;
  // The caches on huge pages, as attnkit's bench keeps its own (no page walks on either side).
  void* buffer = std::aligned_alloc(huge, mem_rounded);
  if (!buffer) throw std::runtime_error("out of memory for " + std::to_string(mem) + " bytes");
  madvise(buffer, mem_rounded, MADV_HUGEPAGE);
  ggml_init_params ip{mem_rounded, buffer, false};
  ggml_context* ctx = ggml_init(ip);

  ggml_tensor* q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.d, s.q, s.h, s.b);
  ggml_tensor* k = ggml_new_tensor_4d(ctx, kt, s.d, s.k, s.hkv, s.b);
  ggml_tensor* v =
      latent ? ggml_view_4d(ctx, k, s.dv, s.k, s.hkv, s.b, k->nb[1], k->nb[2], k->nb[3], 0)
             : ggml_new_tensor_4d(ctx, kt, s.d, s.k, s.hkv, s.b);
  ggml_tensor* mask = masked ? ggml_new_tensor_2d(ctx, GGML_TYPE_F16, s.k, s.q) : nullptr;
  Rng rng{0x9E3779B97F4A7C15ULL ^ uint64_t(s.b * 131 + s.k * 7 + s.h)};
  // Q x 4 over K in [-1, 1): scores with a spread of ~1.3 after the 1/sqrt(D) scale, so the
  // softmax is not uniform and a wrong row or key shows.
  fill_rows(q, s.q * s.h * s.b, s.d, 4.0f, rng);
  fill_rows(k, s.k * s.hkv * s.b, s.d, 1.0f, rng);
  if (!latent) fill_rows(v, s.k * s.hkv * s.b, s.d, 1.0f, rng);
  if (mask) {  // bottom-right aligned causal: query i sees keys j <= i + K - Q
    auto* m = static_cast<ggml_fp16_t*>(mask->data);
    for (int64_t i = 0; i < s.q; ++i)
      for (int64_t j = 0; j < s.k; ++j)
        m[i * s.k + j] = ggml_fp32_to_fp16(j <= i + s.k - s.q ? 0.0f : -INFINITY);
  }
  const float scale = 1.0f / std::sqrt(float(s.d));
  ggml_tensor* out = ggml_flash_attn_ext(ctx, q, k, v, mask, scale, 0.0f, 0.0f);
  ggml_prec_set_acc(out, GGML_PREC_F32);
  ggml_cgraph* gf = ggml_new_graph(ctx);
  ggml_build_forward_expand(gf, out);
  ggml_cplan plan = ggml_graph_plan(gf, threads, pool);
  std::vector<uint8_t> work(plan.work_size);
  plan.work_data = work.data();

  auto compute = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    if (ggml_graph_compute(gf, &plan) != GGML_STATUS_SUCCESS)
      throw std::runtime_error("ggml_graph_compute failed");
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  compute();  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) ms.push_back(compute());

  // fp64 check of sampled rows; out is [D, H, Q, B].
  const int64_t group = s.h / s.hkv;
  double max_err = 0, max_ref = 0;
  bool finite = true;
  std::vector<float> qr(size_t(s.d)), kr(size_t(s.d)), vr(size_t(s.d));  // V: its first dv
  for (int64_t b : {int64_t(0), s.b - 1})
    for (int64_t h : {int64_t(0), s.h - 1})
      for (int64_t i : {int64_t(0), s.q - 1}) {
        row_f32(q, (b * s.h + h) * s.q + i, qr);
        const int64_t kvh = h / group, visible = s.causal ? i + s.k - s.q + 1 : s.k;
        std::vector<double> sc(static_cast<size_t>(visible));
        double mx = -INFINITY;
        for (int64_t j = 0; j < visible; ++j) {
          row_f32(k, (b * s.hkv + kvh) * s.k + j, kr);
          double dot = 0;
          for (int64_t c = 0; c < s.d; ++c) dot += double(qr[size_t(c)]) * kr[size_t(c)];
          sc[size_t(j)] = dot * scale;
          mx = std::max(mx, sc[size_t(j)]);
        }
        std::vector<double> acc(static_cast<size_t>(s.d), 0.0);
        double sum = 0;
        for (int64_t j = 0; j < visible; ++j) {
          const double p = std::exp(sc[size_t(j)] - mx);
          sum += p;
          row_f32(latent ? k : v, (b * s.hkv + kvh) * s.k + j, vr);
          for (int64_t c = 0; c < s.dv; ++c) acc[size_t(c)] += p * vr[size_t(c)];
        }
        const float* o = reinterpret_cast<const float*>(
            static_cast<const char*>(out->data) + h * out->nb[1] + i * out->nb[2] + b * out->nb[3]);
        for (int64_t c = 0; c < s.dv; ++c) {
          const double ref = acc[size_t(c)] / sum;
          finite = finite && std::isfinite(o[c]);
          max_err = std::max(max_err, std::fabs(double(o[c]) - ref));
          max_ref = std::max(max_ref, std::fabs(ref));
        }
      }
  const double rel = finite ? max_err / max_ref : INFINITY;

  const double t = median(ms);
  const size_t read_bytes = latent ? kv_bytes : 2 * kv_bytes;
  double flops = 2.0 * double(s.b * s.h * s.q * s.k) * double(s.d + s.dv);
  if (s.causal && s.q > 1) flops *= 0.5;
  std::printf(
      "{\"peer\":\"llama.cpp ggml_flash_attn_ext\",\"kind\":\"%s\",\"batch\":%lld,\"q_len\":%lld,"
      "\"kv_len\":%lld,\"heads\":%lld,\"kv_heads\":%lld,\"head_size\":%lld,\"head_size_v\":%lld,"
      "\"kv_type\":\"%s\","
      "\"causal\":%s,\"threads\":%d,\"repeats\":%d,\"time_ms\":%.4f,\"gflops\":%.3f,"
      "\"kv_bytes\":%zu,\"gbs\":%.3f,\"rel_err\":%.3g,\"verified\":%s}\n",
      s.kind.c_str(), (long long)s.b, (long long)s.q, (long long)s.k, (long long)s.h,
      (long long)s.hkv, (long long)s.d, (long long)s.dv, s.kv.c_str(), s.causal ? "true" : "false",
      threads, repeats, t, flops / t * 1e-6, read_bytes, double(read_bytes) / t * 1e-6, rel,
      rel < 5e-2 ? "true" : "false");
  std::fflush(stdout);
  ggml_free(ctx);
  std::free(buffer);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, repeats = 10;
  std::vector<Shape> shapes;
  try {
    for (int a = 1; a < argc; ++a) {
      const std::string arg = argv[a];
      if ((arg == "--threads" || arg == "--repeats") && a + 1 < argc) {
        (arg == "--threads" ? threads : repeats) = std::stoi(argv[++a]);
      } else {
        shapes.push_back(parse_shape(arg));
      }
    }
    if (threads < 1 || repeats < 1) throw std::invalid_argument("--threads and --repeats >= 1");
    if (shapes.empty()) throw std::invalid_argument("no shape given");
    ggml_threadpool_params tpp = ggml_threadpool_params_default(threads);
    ggml_threadpool* pool = ggml_threadpool_new(&tpp);
    for (const Shape& s : shapes) run_shape(s, threads, repeats, pool);
    ggml_threadpool_free(pool);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggml_fa_peer: %s\n", e.what());
    return 2;
  }
  return 0;
}
