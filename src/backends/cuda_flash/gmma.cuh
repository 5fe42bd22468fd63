// Hopper (sm_90a) primitives for the kernels that use them, CUDA_FLASH v3's prefill form
// (flash_hopper.cuh) and CUDA_MLA's Hopper form (cuda_mla/mla_hopper.cuh): warpgroup MMA (wgmma),
// mbarriers, named barriers and setmaxnreg. Shared-memory operands
// use the 128-byte swizzle of wgmma's canonical layouts: a tile is a run of 64-element column
// blocks, each `rows` x 128 bytes, with 16-byte chunk j of row r at j ^ (r % 8) of its row.
// Accumulators (m64nN, fp32) hold n8 tile j of a warp's 16 rows in d[4 j .. 4 j + 3], laid out as
// mma.sync's m16n8 C fragments; a register A operand (m64k16) as mma.sync's m16n8k16 A fragment.
#pragma once

#include <cstdint>

namespace attnkit::cuda_flash {

// Row r's 16-byte chunk j (of the whole row, any width) in a swizzled tile whose 64-element
// column blocks are kColBytes apart (= rows x 128). Usable as copy_rows' `Rows` layout.
template <int kColBytes>
struct GmmaRows {
  __device__ __forceinline__ static constexpr int at(int r, int j) {
    return (j >> 3) * kColBytes + r * 128 + (((j & 7) ^ (r & 7)) << 4);
  }
};

// Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride byte
// offsets. K-major operands: 8-row groups 1024 bytes apart (lbo unused). MN-major operands (V):
// lbo = the distance between 64-element column blocks, sbo = 1024 between 8-row groups of the
// reduction dimension. Tiles start 1024-byte aligned. at(bytes) gives the descriptor of the
// operand that many bytes further on with one add: the low word holds the address / 16 in 14 bits
// (shared memory ends below 256 KB, so the add never carries into the lbo field above it).
struct GmmaDesc {
  uint32_t lo, hi;
  __device__ __forceinline__ GmmaDesc(uint32_t addr, uint32_t lbo, uint32_t sbo)
      : lo((addr & 0x3FFFF) >> 4 | ((lbo >> 4) & 0x3FFF) << 16),
        hi(((sbo >> 4) & 0x3FFF) | 1u << 30) {}
  __device__ __forceinline__ uint64_t at(uint32_t bytes) const {
    return uint64_t(hi) << 32 | (lo + (bytes >> 4));
  }
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ATTNKIT_GMMA_BODY 1
// Orders this thread's register writes (accumulators, register A operands) before the wgmma
// that follows.
__device__ __forceinline__ void gmma_arrive() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void gmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most N committed groups of this warpgroup are in flight.
template <int N>
__device__ __forceinline__ void gmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Generic-proxy writes to shared memory (cp.async copies, st.shared) made visible to wgmma.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Pins registers in place around wgmma: the compiler may not move their reads or writes across
// this point (the fence instructions above order nothing the compiler can see).
template <int N>
__device__ __forceinline__ void gmma_fence_regs(float* r) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void gmma_fence_regs(uint32_t* r) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Shared-memory barriers (mbarrier) for producer / consumer warpgroups.
__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  asm volatile(
      "mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(uint32_t(__cvta_generic_to_shared(bar))),
      "r"(count)
      : "memory");
}
// Waits until the phase of parity `parity` has completed (a fresh barrier: parity 1 passes).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, int parity) {
  const uint32_t a = uint32_t(__cvta_generic_to_shared(bar));
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(a), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(
                   uint32_t(__cvta_generic_to_shared(bar)))
               : "memory");
}
// Arrives on `bar` once every cp.async this thread issued before it has landed (the barrier's
// count includes this arrival: no pending-count increment).
__device__ __forceinline__ void mbar_arrive_cp_async(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(
                   uint32_t(__cvta_generic_to_shared(bar)))
               : "memory");
}
// Barrier `id` (1..15; 0 is __syncthreads') over `threads` threads: wait there, or arrive
// without waiting.
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Per-thread register budget of a warpgroup (every warp of it executes this).
template <int N>
__device__ __forceinline__ void regs_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void regs_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// d = m64nN accumulators. ss: d = (scale_d ? d : 0) + A B^T, A and B K-major from shared memory.
// ss_t: d += A B, A K-major and B MN-major from shared memory. rs_t: d += A B, A from registers
// (four 32-bit words of 16-bit pairs), B MN-major from shared memory.
template <typename T, int N>
struct Gmma;

#define ATTNKIT_GMMA_D16 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15"
#define ATTNKIT_GMMA_D32 \
  ATTNKIT_GMMA_D16 ",%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define ATTNKIT_GMMA_D64                                                                          \
  ATTNKIT_GMMA_D32                                                                                \
  ",%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54," \
  "%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define ATTNKIT_GMMA_D96                                                                          \
  ATTNKIT_GMMA_D64                                                                                \
  ",%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86," \
  "%87,%88,%89,%90,%91,%92,%93,%94,%95"
#define ATTNKIT_GMMA_D128                                                                        \
  ATTNKIT_GMMA_D96                                                                               \
  ",%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114," \
  "%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
#define ATTNKIT_GMMA_R4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define ATTNKIT_GMMA_R16(i) \
  ATTNKIT_GMMA_R4(i), ATTNKIT_GMMA_R4(i + 4), ATTNKIT_GMMA_R4(i + 8), ATTNKIT_GMMA_R4(i + 12)
#define ATTNKIT_GMMA_R32(i) ATTNKIT_GMMA_R16(i), ATTNKIT_GMMA_R16(i + 16)
#define ATTNKIT_GMMA_R64(i) ATTNKIT_GMMA_R32(i), ATTNKIT_GMMA_R32(i + 32)
#define ATTNKIT_GMMA_R96(i) ATTNKIT_GMMA_R64(i), ATTNKIT_GMMA_R32(i + 64)
#define ATTNKIT_GMMA_R128(i) ATTNKIT_GMMA_R64(i), ATTNKIT_GMMA_R64(i + 64)

// One (element type, N) specialization. DL: the accumulators' placeholder list; R: their
// operands; A..E: the placeholders that follow them, as strings.
#define ATTNKIT_GMMA(TY, PT, N, DL, R, A, B, C, D, E)                                            \
  template <>                                                                                    \
  struct Gmma<TY, N> {                                                                           \
    __device__ __forceinline__ static void ss(float* d, uint64_t da, uint64_t db, int scale_d) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" C                                        \
                   ", 0;\n"                                                                      \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PT "." PT " {" DL "}, %" A  \
                   ", %" B ", p, 1, 1, 0, 0;\n}\n"                                               \
                   : R(0)                                                                        \
                   : "l"(da), "l"(db), "r"(scale_d));                                            \
    }                                                                                            \
    __device__ __forceinline__ static void ss_t(float* d, uint64_t da, uint64_t db) {            \
      asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PT "." PT " {" DL "}, %" A  \
                   ", %" B ", 1, 1, 1, 0, 1;\n"                                                  \
                   : R(0)                                                                        \
                   : "l"(da), "l"(db));                                                          \
    }                                                                                            \
    __device__ __forceinline__ static void rs_t(float* d, const uint32_t (&a)[4], uint64_t db) { \
      asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PT "." PT " {" DL "}, {%" A \
                   ", %" B ", %" C ", %" D "}, %" E ", 1, 1, 1, 1;\n"                            \
                   : R(0)                                                                        \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));                       \
    }                                                                                            \
  };
#define ATTNKIT_GMMA_TYPES(N, DL, R, A, B, C, D, E)            \
  ATTNKIT_GMMA(__nv_bfloat16, "bf16", N, DL, R, A, B, C, D, E) \
  ATTNKIT_GMMA(__half, "f16", N, DL, R, A, B, C, D, E)
ATTNKIT_GMMA_TYPES(32, ATTNKIT_GMMA_D16, ATTNKIT_GMMA_R16, "16", "17", "18", "19", "20")
ATTNKIT_GMMA_TYPES(64, ATTNKIT_GMMA_D32, ATTNKIT_GMMA_R32, "32", "33", "34", "35", "36")
ATTNKIT_GMMA_TYPES(128, ATTNKIT_GMMA_D64, ATTNKIT_GMMA_R64, "64", "65", "66", "67", "68")
ATTNKIT_GMMA_TYPES(192, ATTNKIT_GMMA_D96, ATTNKIT_GMMA_R96, "96", "97", "98", "99", "100")
ATTNKIT_GMMA_TYPES(256, ATTNKIT_GMMA_D128, ATTNKIT_GMMA_R128, "128", "129", "130", "131", "132")
#undef ATTNKIT_GMMA_TYPES
#undef ATTNKIT_GMMA
#undef ATTNKIT_GMMA_R128
#undef ATTNKIT_GMMA_R96
#undef ATTNKIT_GMMA_R64
#undef ATTNKIT_GMMA_R32
#undef ATTNKIT_GMMA_R16
#undef ATTNKIT_GMMA_R4
#undef ATTNKIT_GMMA_D128
#undef ATTNKIT_GMMA_D96
#undef ATTNKIT_GMMA_D64
#undef ATTNKIT_GMMA_D32
#undef ATTNKIT_GMMA_D16
#endif

}  // namespace attnkit::cuda_flash
