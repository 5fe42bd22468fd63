// Toy: wgmma S = Q K^T (K-major A and B, SW128) and O = P V (A from registers, V MN-major SW128),
// one warpgroup, 64 rows x 64 keys x 576 dims; V = the first 256 dims of K rows.
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <cmath>
#include <vector>
#include <random>

constexpr int R = 64, NK = 64, D = 576, DV = 256;

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }
// tile layout: [D/64 chunks][rows][128B], 16B chunk j of row r at j ^ (r & 7); base 1024-aligned
__device__ __forceinline__ uint32_t sw_off(int rows, int r, int col) {  // col in elements
  const int c = col / 64, j = (col % 64) / 8;
  return uint32_t(c * rows * 128 + r * 128 + ((j ^ (r & 7)) * 16) + (col % 8) * 2);
}
__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  uint64_t d = 0;
  d |= uint64_t((addr & 0x3FFFF) >> 4);
  d |= uint64_t((lbo >> 4) & 0x3FFF) << 16;
  d |= uint64_t((sbo >> 4) & 0x3FFF) << 32;
  d |= uint64_t(1) << 62;
  return d;
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void wgmma_s(float (&d)[32], uint64_t da, uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
      "%32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(scale_d));
}
#define R8(i) "+f"(d[i]), "+f"(d[i+1]), "+f"(d[i+2]), "+f"(d[i+3]), "+f"(d[i+4]), "+f"(d[i+5]), "+f"(d[i+6]), "+f"(d[i+7])
__device__ __forceinline__ void wgmma_o(float (&d)[128], const uint32_t (&a)[4], uint64_t db) {
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
      "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
      "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, "
      "{%128,%129,%130,%131}, %132, 1, 1, 1, 1;\n}\n"
      : R8(0), R8(8), R8(16), R8(24), R8(32), R8(40), R8(48), R8(56), R8(64), R8(72), R8(80), R8(88), R8(96), R8(104), R8(112), R8(120)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

__global__ void toy(const __nv_bfloat16* q, const __nv_bfloat16* k, float* s_out, float* o_out,
                    uint32_t lbo_v, uint32_t sbo_v) {
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* sq = smem;                 // R x D
  unsigned char* sk = smem + R * D * 2;     // NK x D
  const int tid = threadIdx.x;
  for (int i = tid; i < R * D / 8; i += 128) {
    const int r = i / (D / 8), col = (i % (D / 8)) * 8;
    *reinterpret_cast<uint4*>(sq + sw_off(R, r, col)) = *reinterpret_cast<const uint4*>(q + r * D + col);
  }
  for (int i = tid; i < NK * D / 8; i += 128) {
    const int r = i / (D / 8), col = (i % (D / 8)) * 8;
    *reinterpret_cast<uint4*>(sk + sw_off(NK, r, col)) = *reinterpret_cast<const uint4*>(k + r * D + col);
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  float s[32];
  for (int i = 0; i < 32; ++i) s[i] = 0.f;
  wg_fence();
  for (int kk = 0; kk < D / 16; ++kk) {
    const int c = kk / 4, w = kk % 4;
    const uint64_t da = desc(smem_u32(sq + c * R * 128 + w * 32), 16, 1024);
    const uint64_t db = desc(smem_u32(sk + c * NK * 128 + w * 32), 16, 1024);
    wgmma_s(s, da, db, 1);
  }
  wg_commit();
  wg_wait<0>();
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  for (int j = 0; j < 8; ++j)
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * warp + g + 8 * (e / 2), col = 8 * j + 2 * t + (e & 1);
      s_out[row * NK + col] = s[4 * j + e];
    }
  // P = bf16(S * 0.01) as A fragments; O = P V, V = sk's first 256 dims (chunks 0..3)
  float o[128];
  for (int i = 0; i < 128; ++i) o[i] = 0.f;
  wg_fence();
  for (int kk = 0; kk < NK / 16; ++kk) {
    uint32_t a[4];
    a[0] = pack_bf16(s[8 * kk + 0] * 0.01f, s[8 * kk + 1] * 0.01f);
    a[1] = pack_bf16(s[8 * kk + 2] * 0.01f, s[8 * kk + 3] * 0.01f);
    a[2] = pack_bf16(s[8 * kk + 4] * 0.01f, s[8 * kk + 5] * 0.01f);
    a[3] = pack_bf16(s[8 * kk + 6] * 0.01f, s[8 * kk + 7] * 0.01f);
    const uint64_t db = desc(smem_u32(sk + kk * 16 * 128), lbo_v, sbo_v);
    wgmma_o(o, a, db);
  }
  wg_commit();
  wg_wait<0>();
  for (int j = 0; j < 32; ++j)
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * warp + g + 8 * (e / 2), col = 8 * j + 2 * t + (e & 1);
      o_out[row * DV + col] = o[4 * j + e];
    }
}

int main() {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> U(-1, 1);
  std::vector<__nv_bfloat16> q(R * D), k(NK * D);
  std::vector<float> qf(R * D), kf(NK * D);
  for (int i = 0; i < R * D; ++i) { q[i] = __float2bfloat16(U(rng)); qf[i] = __bfloat162float(q[i]); }
  for (int i = 0; i < NK * D; ++i) { k[i] = __float2bfloat16(U(rng)); kf[i] = __bfloat162float(k[i]); }
  __nv_bfloat16 *dq, *dk; float *ds, *dout;
  cudaMalloc(&dq, q.size() * 2); cudaMalloc(&dk, k.size() * 2);
  cudaMalloc(&ds, R * NK * 4); cudaMalloc(&dout, R * DV * 4);
  cudaMemcpy(dq, q.data(), q.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dk, k.data(), k.size() * 2, cudaMemcpyHostToDevice);
  const int smem = (R + NK) * D * 2;
  cudaFuncSetAttribute(toy, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  // reference
  std::vector<double> sref(R * NK), oref(R * DV, 0.0);
  std::vector<float> p(R * NK);
  for (int r = 0; r < R; ++r) for (int n = 0; n < NK; ++n) { double a = 0; for (int d = 0; d < D; ++d) a += double(qf[r * D + d]) * kf[n * D + d]; sref[r * NK + n] = a; }
  uint32_t cands[][2] = {{NK * 128, 1024}, {1024, NK * 128}, {16, 1024}, {NK * 128, 2048}};
  for (auto& cnd : cands) {
    cudaMemset(ds, 0, R * NK * 4); cudaMemset(dout, 0, R * DV * 4);
    toy<<<1, 128, smem>>>(dq, dk, ds, dout, cnd[0], cnd[1]);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("err %s\n", cudaGetErrorString(e)); return 1; }
    std::vector<float> s(R * NK), o(R * DV);
    cudaMemcpy(s.data(), ds, s.size() * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(o.data(), dout, o.size() * 4, cudaMemcpyDeviceToHost);
    double es = 0, ms = 0;
    for (int i = 0; i < R * NK; ++i) { es = fmax(es, fabs(s[i] - sref[i])); ms = fmax(ms, fabs(sref[i])); }
    // O ref from the device's own S (bf16 of s*0.01) to isolate the PV layout
    double eo = 0, mo = 0;
    for (int r = 0; r < R; ++r) for (int d = 0; d < DV; ++d) {
      double a = 0;
      for (int n = 0; n < NK; ++n) a += double(__bfloat162float(__float2bfloat16(s[r * NK + n] * 0.01f))) * kf[n * D + d];
      eo = fmax(eo, fabs(o[r * DV + d] - a)); mo = fmax(mo, fabs(a));
    }
    printf("lbo %u sbo %u: S max err %.3e (max %.2f)  O max err %.3e (max %.2f)\n", cnd[0], cnd[1], es, ms, eo, mo);
  }
  return 0;
}
