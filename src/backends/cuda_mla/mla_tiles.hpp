// CUDA_MLA's kernel forms and the Hopper form's tile sizes: plain constexpr data shared by the
// kernels (mla_hopper.cuh) and the host plan, which picks the form and sizes the grid and split
// count from it.
#pragma once

#include <cstdint>

namespace attnkit::cuda_mla {

// FlashParams::form values of CUDA_MLA (the plan's choice; CudaFlashOptions::mla_form forces one).
inline constexpr int kWideForm = 1;    // flash_wide_kernel with V in the K rows (mma.sync, SM80+)
inline constexpr int kHopperForm = 2;  // mla_hopper_kernel (wgmma, sm_90a, plain logits)

inline constexpr int kHopperRows = 64, kHopperKeys = 64, kHopperThreads = 256;
inline constexpr int kLatent = 576, kLatentV = 512;
inline constexpr int kColBytes = kHopperRows * 128;  // one 64-element column block of a tile
inline constexpr int kTileBytes = kLatent / 64 * kColBytes;  // 73728: a 64 x 576 16-bit tile
inline constexpr int kRawBytes = kHopperKeys * kLatent;      // a raw fp8 tile
inline constexpr int kPTileBytes = kColBytes;  // 64 rows x 64 keys of 16-bit probabilities
inline constexpr int kExchangeBytes = 2 * 2 * kHopperRows * 4;  // [tile max, row sum][wg][row]
// Dynamic shared memory: Q, two 16-bit K stages (or two raw fp8 stages and one dequantized tile),
// the probability tile and the warpgroups' row exchange.
constexpr int hopper_smem_bytes(bool fp8) {
  return kTileBytes + (fp8 ? 2 * kRawBytes + kTileBytes : 2 * kTileBytes) + kPTileBytes +
         kExchangeBytes;
}
// Static: the ring of three tiles' row offsets and counts.
inline constexpr int kHopperStaticSmem = 3 * kHopperKeys * 4 + 3 * 4;
static_assert(hopper_smem_bytes(false) <= 227 * 1024 - 1024, "fits SM90's shared memory");
static_assert(hopper_smem_bytes(true) == hopper_smem_bytes(false), "one size for both kinds");

// The Hopper form keeps each key row's offset in the K tensor in 16-byte units in 32 bits.
inline constexpr int64_t kMaxLatentBytes = int64_t(1) << 36;

}  // namespace attnkit::cuda_mla
