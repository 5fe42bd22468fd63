// Tile sizes and the split-KV heuristic, shared by the kernels and the host plan (constexpr, so
// both sides compute the same numbers).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "backends/cuda_flash/flash_params.hpp"  // ATTNKIT_HD

namespace attnkit::cuda_flash {

inline constexpr int kThreads = 128;      // 4 warps
inline constexpr int kBlockMDecode = 16;  // rows per CTA when the warps split the keys (decode)
// Packed rows a sequence up to which fp8 caches at heads up to 128 take the decode form (as
// kBlockMDecode-row blocks) where 16-bit ones run a prefill form (fp8_side_decode).
inline constexpr int kFp8DecodeRows = 2 * kBlockMDecode;
inline constexpr int kMaxSplits = 128;

// Wide heads (either side over 256): 16 rows x head_v of O no longer fit one warp's registers, so
// the four warps split the head dimension instead of the rows (flash_wide.cuh). Its tiles: 32 rows
// (two 16-row m-tiles, spill-free on SM80 and SM90a), 16 keys and two stages, which with the Q
// tile and the partial-score exchange fit SM80's 163 KiB (head 512: 106 KiB with the page ring)
// and leave two CTAs per SM on SM90.
constexpr bool is_wide(int head_qk, int head_v) { return std::max(head_qk, head_v) > 256; }
inline constexpr int kWideBlockM = 32;
inline constexpr int kWideBlockN = 16;
inline constexpr int kWideStages = 2;

// Keys per tile: 64, or 32 when a head is wider than 128 (register and shared-memory budget).
constexpr int block_n(int head_qk, int head_v) {
  if (is_wide(head_qk, head_v)) return kWideBlockN;
  return std::max(head_qk, head_v) > 128 ? 32 : 64;
}

// Prefill form: 16-row m-tiles per warp. Two (32 rows per warp, 128 per CTA) for the heads up to
// 128 (64, 80, 96, 128): every K/V fragment read by ldmatrix then feeds two MMAs and each staged
// K/V tile serves twice the rows (the FA2 layout). Wider heads keep 64 rows per CTA (the O
// accumulators would not fit; the 16-bit ones run two m-tiles per warp pair, separate_kv). Heads 80
// and 96, whose 16-byte row chunks (10, 12) do not divide the threads, ran one m-tile until session
// 60 (their two-tile kernels had spilled); with row-address copies only (packed_page_copies) they
// fit 251 / 254 registers without a spill and ran 1.08-1.22x / 1.09-1.24x the one-tile form's
// TFLOP/s on an H100 (prefill grid, two rounds; results/cuda_2026-12-06_s60_call8/, _call9/).
constexpr int prefill_m_tiles(int head_qk, int head_v) {
  return std::max(head_qk, head_v) <= 128 ? 2 : 1;
}
// Packed (token, head-of-group) rows per CTA.
constexpr int block_m(bool warps_split_keys, int head_qk, int head_v) {
  if (is_wide(head_qk, head_v)) return kWideBlockM;
  return warps_split_keys ? kBlockMDecode : 64 * prefill_m_tiles(head_qk, head_v);
}
// The decode form needs a 16-key slice per warp, so 64-key tiles: over 16-bit caches heads up to
// 128 (the 16-bit forms take 32-key tiles above). Over fp8 caches every head up to 256 has it:
// its fragments are converted in registers, and at heads 129..256 a 64-key fp8 tile is the bytes
// of a 32-key 16-bit one (Q is then re-read from shared memory each tile; flash_fwd.cuh). The
// wide form has one form for every batch.
constexpr bool has_decode_form(int head_qk, int head_v, bool fp8) {
  return !is_wide(head_qk, head_v) && (fp8 || block_n(head_qk, head_v) == 64);
}

// Whether a batch whose 16-bit plan runs a prefill form (its sequences' most packed rows:
// `max_rows`) runs the decode form over an fp8 cache, planned beside it: at heads 129..256, which
// have a decode form over fp8 caches only, one kBlockMDecode-row block a sequence; at heads up to
// 128, speculative decodes of up to kFp8DecodeRows rows as two blocks, whose CTAs read the same
// K/V lines (the second from L2). There the prefill forms dequantize each fp8 tile into shared
// memory for a 64- or 128-row tile; on the H200 the decode form ran 1.13-1.24x faster at 32 rows
// and 0.69-0.89x at 64 (four blocks), while over 16-bit caches the Hopper form stayed 1.11-2.1x
// faster than it (bench/NOTES.md, session 28, r4).
constexpr bool fp8_side_decode(int head_qk, int head_v, int max_rows) {
  if (!has_decode_form(head_qk, head_v, true)) return false;
  return has_decode_form(head_qk, head_v, false)
             ? max_rows > kBlockMDecode && max_rows <= kFp8DecodeRows
             : max_rows <= kBlockMDecode;
}

// Prefill over 16-bit caches with heads 129..256: FA2's schedule. K and V are single-buffered and
// each loads under the other's math (V under Q.K^T and the softmax, the next K under P.V), so
// 64-key tiles fit two CTAs per SM where a two-stage K+V ring only fits 32-key tiles. Its warps
// work in pairs (flash_fwd.cuh): each pair holds 32 rows, each warp half of O's dims in whole
// 16-dim steps, so V's head is a multiple of 32 (160 and 224 split their last 32 dims 16 / 16;
// they ran the two-stage ring of 32-key tiles until session 62).
constexpr bool separate_kv(int head_qk, int head_v, bool fp8, bool split_keys) {
  return !fp8 && !split_keys && !is_wide(head_qk, head_v) && std::max(head_qk, head_v) > 128 &&
         head_v % 32 == 0;
}
// A warp pair splits V's dims: each whole 64-dim group in 32-dim blocks, warp h taking 16-byte
// chunks 4 h .. 4 h + 3 of every 8 (so a lane's chunk bits never carry into SmemRows::step's
// offsets), and a last 32-dim group (heads 160 and 224, whose padded rows are not swizzled) in
// 16-dim halves. Of a warp's kOT n8 O tiles (V's head / 16), the first pair_group_tiles(kOT) lie
// in the groups (tile j is chunk pair_half_chunk(j) + 4 h); the tail's tiles j are chunks
// 2 pair_group_tiles(kOT) + 2 h + (j - pair_group_tiles(kOT)). Host tests check that the two
// warps cover every chunk once.
ATTNKIT_HD constexpr int pair_half_chunk(int j) { return 8 * (j / 4) + j % 4; }
ATTNKIT_HD constexpr int pair_group_tiles(int kOT) { return kOT / 4 * 4; }
ATTNKIT_HD constexpr int pair_chunk(int kOT, int j, int h) {
  return j < pair_group_tiles(kOT) ? pair_half_chunk(j) + 4 * h
                                   : 2 * pair_group_tiles(kOT) + 2 * h + j - pair_group_tiles(kOT);
}

// Keys per tile of a kernel form: fp8 caches in the decode form take 128-key tiles up to head 128
// (the same 16 KB as a 64-key 16-bit tile), so the per-tile fixed costs (barriers, page ring,
// softmax bookkeeping) are paid once per 128 keys, and 64-key tiles (32 KB) at heads 129..256.
// The prefill form takes 128 at heads <= 64 (FA2's tile there: a 64-key tile gave each warp half
// of head 128's MMAs for the same softmax and barrier costs, and ran at 0.79-0.90x FA2; Q is then
// re-read from shared memory to make room for the scores); separate_kv takes 64; everything else
// uses block_n.
constexpr int tile_keys(int head_qk, int head_v, bool fp8, bool split_keys) {
  if (fp8 && split_keys && has_decode_form(head_qk, head_v, true))
    return std::max(head_qk, head_v) <= 128 ? 128 : 64;
  if (!split_keys && std::max(head_qk, head_v) <= 64) return 128;
  return separate_kv(head_qk, head_v, fp8, split_keys) ? 64 : block_n(head_qk, head_v);
}

// Shared-memory rows of the Q/K/V tiles (SmemRows below). Rows of a multiple of 128
// bytes are unpadded, their 16-byte chunks XOR-swizzled by row % 8: each 128-byte line of a row
// then lands in one aligned 128-byte span, which cp.async sends to L2 as one request, and
// ldmatrix's 8 rows still hit 8 distinct bank groups. With a 16-byte pad per row a line straddled
// two spans: at head 256, 4k, 177 M L2 requests and 404 M sectors against FA2's 60 M and 240 M;
// swizzled, 54 M and 216 M (v2n ncu, r3 and r6: prefill head 256 +18-23%, decode 5-11% faster).
// 192-byte rows (16-bit head 96, fp8 head 192) are unpadded as well, their chunks swizzled inside
// each 64-byte quarter of a line by (row / 2) % 4: a packed tile's 128-byte lines then land in
// the same 128-byte spans as in memory, and 8 consecutive rows (4 row pairs, each pair's rows in
// opposite halves of a span) still hit 8 bank groups. Padded by 16 bytes, v2's head 96 sent L2
// 1.48x FA2's sectors for the same bytes (51.0 M against 34.4 M at 1k); swizzled, 30.2 M, and
// on an H100 v2's head-96 prefill ran 1.03-1.05x, fp8 head 192's 1.13-1.22x and both decode
// forms 3-5% faster (s72 call 1). Rows of an odd number of 32-byte units (16-bit head 80's 160
// bytes; fp8 heads 96, 160 and 224) swap the two chunks of each 32-byte unit on rows 4..7 of every
// 8 ((row / 4) % 2): the unit stays in its span, and rows r and r + 4, which start in the same bank
// group, then differ in chunk bit 0. Head 80 at 1k sent L2 50.8 M sectors padded, 29.7 M
// swizzled; on an H100 its prefill ran 1.02-1.04x and its decode 1.04-1.06x, and fp8 decode at
// heads 96, 160 and 224 1.04-1.08x (s73 call 2). Other rows (fp8 head 80; fp8 head 64, whose decode
// form would count five CTAs per SM by shared memory unpadded where its registers hold four, and
// decode_floor reads that count; 16-bit heads 160 and 224, whose warp-pair tail needs plain rows)
// and the wide form's are padded to an odd number of 16-byte chunks (16 bytes, or 32 for 80-byte
// rows, which a 16-byte pad left 2-way conflicted), so 8 consecutive rows still start in 8 bank
// groups.
constexpr int smem_swizzle_chunks(int row_bytes, bool swizzle = true) {
  if (!swizzle) return 0;
  if (row_bytes % 128 == 0) return 8;
  return row_bytes == 192 ? 4 : row_bytes % 64 == 32 ? 2 : 0;
}
constexpr bool smem_swizzled(int row_bytes, bool swizzle = true) {
  return smem_swizzle_chunks(row_bytes, swizzle) != 0;
}
constexpr int smem_row_bytes(int row_bytes, bool swizzle = true) {
  if (smem_swizzled(row_bytes, swizzle)) return row_bytes;
  return row_bytes / 16 % 2 == 0 ? row_bytes + 16 : row_bytes + 32;
}
// Row strides in elements of 16-bit tiles and bytes of fp8 tiles.
constexpr int smem_stride16(int head, bool swizzle = true) {
  return smem_row_bytes(2 * head, swizzle) / 2;
}
constexpr int smem_stride8(int head, bool swizzle = true) { return smem_row_bytes(head, swizzle); }

// Byte layout of a shared-memory tile whose rows hold kRowBytes (smem_row_bytes): swizzled rows
// store 16-byte chunk c of row r at chunk c ^ swizzle(r) of an unpadded row (r % 8; r / 2 % 4 for
// 192-byte rows; r / 4 % 2 for the odd multiples of 32), padded ones at chunk c of a padded row.
// Tiles start 128-byte aligned. Host code checks the invariants
// (tests/backends/cuda_flash_test.cpp).
template <int kRowBytes, bool kSwizzleOk = true>
struct SmemRows {
  static constexpr int kSpan = smem_swizzle_chunks(kRowBytes, kSwizzleOk);  // chunks an XOR spans
  static constexpr bool kSwizzled = kSpan != 0;
  static constexpr int kStride = smem_row_bytes(kRowBytes, kSwizzleOk);
  ATTNKIT_HD static constexpr int swizzle(int r) {
    return kSpan == 8 ? r & 7 : kSpan == 4 ? (r >> 1) & 3 : (r >> 2) & 1;
  }
  ATTNKIT_HD static constexpr int at(int r, int c) {
    return r * kStride + (kSwizzled ? c ^ swizzle(r) : c) * 16;
  }
  // at(r + dr, c + dc) from a = base + at(r, c) (an ldmatrix lane address), for dr a multiple of
  // 8 and dc sharing no bit with c below kSpan (a lane's chunk 0 or 1, steps of 2): one XOR with
  // a constant and an offset the load instruction carries.
  ATTNKIT_HD static constexpr uint32_t step(uint32_t a, int dr, int dc) {
    if constexpr (kSwizzled)
      return (a ^ uint32_t((dc & (kSpan - 1)) << 4)) + dr * kStride + (dc / kSpan) * kSpan * 16;
    else
      return a + dr * kStride + dc * 16;
  }
};

// Kernel forms whose key tiles, when a page holds whole tiles with packed rows, are copied from
// the page's base (flash_fwd.cuh copy_packed_rows), the next tile's page held in registers
// instead of the page ring: the 16-bit prefill form with two m-tiles and 64-key tiles (heads
// 65..128), where one address per tile measured +1-4% (v2l). Enabled in every form (v2l r1), it
// cost elsewhere: head 64 (128-key tiles, 255 registers) ran 9-13% slower (register moves, 8% more
// instructions); head 256 (separate K/V) 2-5% slower, its bursts of 16 copies holding their
// address registers until issued (long-scoreboard stalls where ptxas reuses them); fp8 decode 0-3%
// slower, bf16 decode unchanged. Heads 80 and 96 copy a tile as one run of chunks (chunk c to row
// c / chunks): with the page's base read from the ring they ran 1-6% slower, the copies waiting on
// that shared load (s74 call 2); from registers, 80 +0.2-1.3% and 96 -0.7% to +2.7% (s75 call 1).
constexpr bool packed_page_copies(int head_qk, int head_v, bool fp8, bool split_keys) {
  return !fp8 && !split_keys && !is_wide(head_qk, head_v) &&
         !separate_kv(head_qk, head_v, fp8, split_keys) && prefill_m_tiles(head_qk, head_v) == 2 &&
         tile_keys(head_qk, head_v, fp8, split_keys) == 64;
}

// K/V tiles in the cp.async ring. Decode is bound by bytes in flight per SM (latency x
// bandwidth), so its 16-bit form keeps three 64-key tiles in flight; prefill keeps two and spends
// shared memory on occupancy instead. (v2.4: fp8 with four stages and a dequantized tile measured
// slower, one CTA per SM instead of two.) fp8 in the decode form converts its fragments in
// registers (no dequantized tile) and takes two 128-key stages (78 KB with the Q tile): two CTAs
// per SM, each with 37 KB in flight; at heads 129..256 two 64-key stages of 32 KB (a third, still
// two CTAs per SM, measured -3.1..+1.6%: s20 r2).
constexpr int num_stages(int head_qk, int head_v, bool fp8, bool split_keys) {
  if (separate_kv(head_qk, head_v, fp8, split_keys)) return 1;
  return split_keys && !fp8 ? 3 : 2;
}

// The wide form: Q tile, K/V stages (raw fp8 ones plus one dequantized tile for fp8) and the
// four warps' partial scores of a tile (fp32). v_in_k (MLA's latent cache: V is the first head_v
// elements of each K row) keeps K rows only.
constexpr int wide_smem_bytes(int head_qk, int head_v, bool fp8, bool v_in_k = false) {
  const int q = kWideBlockM * smem_stride16(head_qk, false) * 2;
  const int exchange = 4 * kWideBlockM * kWideBlockN * 4;
  const int v16 = v_in_k ? 0 : smem_stride16(head_v, false);
  const int v8 = v_in_k ? 0 : smem_stride8(head_v, false);
  const int kv16 = kWideBlockN * (smem_stride16(head_qk, false) + v16) * 2;
  const int kv8 = kWideBlockN * (smem_stride8(head_qk, false) + v8);
  return q + exchange + (fp8 ? kWideStages * kv8 + kv16 : kWideStages * kv16);
}

// Warp pairs (the separate_kv form, flash_fwd.cuh): per pair, its probabilities [32][bn + 8]
// (16-bit) and its two warps' row values [2][32] (fp32).
constexpr int pair_exchange_bytes(int bn) { return 2 * (32 * (bn + 8) * 2 + 2 * 32 * 4); }

// A decode-form CTA that asks for this much shared memory shares its SM with one other at most
// (227 KiB on SM90). The fp8 decode form at heads of 128 or more is built with it: head 128's
// swizzled tiles need 68 KB and 167 registers, which fit three: 64x4k 32/8 then ran 17-20% slower
// (512 CTAs in 1.3 waves), 256x2k 1-5% faster (v2n r7); per layer in the layer loop 1x32k 32/4
// 9-12% and 64x4k 15-29% slower, 256x2k 1-4% faster (s34 r2). Narrower fp8 heads are built for
// what their tiles need (four CTAs per SM at head 64, 48 KB with the page ring and 110-128
// registers; three at 80 and 96), as is the 16-bit decode form (four at head 64, three at 80, two
// from 96), and every decode launch asks for the floor when decode_floor says so.
inline constexpr int kDecodeMinSmem = 80 * 1024;
constexpr int fp8_decode_min_smem(int head_qk, int head_v) {
  return std::max(head_qk, head_v) >= 128 ? kDecodeMinSmem : 0;
}
// Whether a decode launch of `ctas` CTAs, whose kernel fits `per_sm` CTAs per SM, asks for
// kDecodeMinSmem (two per SM). H200, fp8, layer loop, against the floor at every launch (s46 r1):
// grids of several waves ran 0.74-0.93x the time (head 64: Whisper's 20/20 over 1500 keys at
// batches 16-256, 32/8 at 64x4k and 256x2k; heads 80 and 96 at 64x4k); but grids that fit two
// per SM (256 CTAs: 1x32k and 16x8k 32/8 at head 64, 1x32k 32/32 at 96) ran 1.04-1.44x in the
// loop (single calls level: the next layer's CTAs pile onto some SMs), and 512 CTAs at three per
// SM (1.3 waves, 16x8k 32/32 at heads 80 and 96) 1.19-1.25x, their last wave one CTA per SM. So
// the floor stays unless the grid overflows two per SM and fills its last wave at `per_sm` to
// 80% or more (s46 r2: those rows 0.72-0.95x, every other row level). Only where the floor means
// two per SM: on SM80 (164 KiB per SM) it leaves one, and run() keeps the kernel's own there.
constexpr bool decode_floor(int64_t ctas, int num_sms, int per_sm) {
  if (per_sm <= 2 || ctas <= 2 * int64_t(num_sms)) return true;
  const int64_t slots = int64_t(per_sm) * num_sms;
  const int64_t waves = (ctas + slots - 1) / slots;
  return ctas * 5 < waves * slots * 4;
}
// Whether the decode form copies its first cache tile before griddepcontrol.wait (where the batch
// says earlier_rows_settled). In a layer loop the copy then runs under the previous layer's tail,
// which pays where the next layer's CTAs find no free slot until that tail. H200, a layer (s66
// call 1): 1x32k 32/4 and 32/8 (256 CTAs on 264 slots) 0.917-0.960x, 16x8k, 64x4k and 256x2k
// 0.981-0.999x. Where those CTAs are resident all along (1x32k's 128 CTAs, one per SM) the early
// copy competes with the running layer: 0.996-1.014x there, and ragged plans' waves 0.994-1.005x
// (with every stage's tile early, s65 call 1 on an H100: 1.02-1.08x and 1.00-1.03x).
constexpr bool early_copies_pay(int64_t ctas, int64_t slots, bool ragged) {
  return !ragged && 2 * ctas > slots;
}
constexpr int flash_smem_bytes(int head_qk, int head_v, bool fp8, bool split_keys = false,
                               bool v_in_k = false) {
  if (is_wide(head_qk, head_v)) return wide_smem_bytes(head_qk, head_v, fp8, v_in_k);
  const int kStages = num_stages(head_qk, head_v, fp8, split_keys);
  const int bn = tile_keys(head_qk, head_v, fp8, split_keys);
  const int q = block_m(split_keys, head_qk, head_v) * smem_stride16(head_qk) * 2;
  const int kv16 = bn * (smem_stride16(head_qk) + smem_stride16(head_v)) * 2;
  if (separate_kv(head_qk, head_v, fp8, split_keys))
    return q + kStages * kv16 + pair_exchange_bytes(bn);
  if (!fp8) return q + kStages * kv16;
  const int kv8 = bn * (smem_stride8(head_qk) + smem_stride8(head_v));
  // Prefill: raw fp8 stages plus one dequantized tile. Decode: raw stages only (fragments are
  // converted in registers); they also hold the epilogue's merge of the 4 warps' [16][head_v]
  // fp32 states and (m, l).
  if (split_keys)
    return std::max(fp8_decode_min_smem(head_qk, head_v),
                    q + std::max(kStages * kv8, 4 * 16 * head_v * 4 + 2 * 4 * 16 * 4));
  return q + kStages * kv8 + kv16;
}
// Static shared memory of a CTA: the ring of K and V row addresses and row counts (kStages + 1
// slots).
constexpr int flash_static_smem_bytes(int head_qk, int head_v, bool fp8, bool split_keys) {
  if (is_wide(head_qk, head_v)) return (kWideStages + 1) * (kWideBlockN * 2 * 8 + 4);
  return (num_stages(head_qk, head_v, fp8, split_keys) + 1) *
         (tile_keys(head_qk, head_v, fp8, split_keys) * 2 * 8 + 4);
}

// CTAs one multiprocessor holds at once, from the shared-memory budget (227 KiB on SM90,
// 163 KiB on SM80; `smem_per_sm` comes from the device).
constexpr int ctas_per_sm(int smem_per_sm, int smem_per_cta) {
  return std::clamp(smem_per_sm / std::max(smem_per_cta, 1), 1, 8);
}

// v3's Hopper prefill form (flash_hopper.cuh, sm_90a): heads qk and v, each a multiple of 16 from
// 64 to 256, v no wider than qk (the epilogue's O tile reuses Q's; 192/128 is MLA's prefill), over
// 16-bit and fp8 caches. 128 packed rows per CTA, 64 per consumer warpgroup, one producer
// warpgroup. Its shared-memory tiles are wgmma's 64-element column blocks, so a head that is not a
// multiple of 64 is laid out as the next one up (hopper_layout_head: 80 and 96 as 128, 160 as 192,
// 224 as 256); Q K^T reads only the head's own columns, P V runs over the layout's width (a
// wgmma's N spans whole column blocks) and the columns past the head, never written, give output
// columns that are never stored. Two K/V stages of hopper_prefill_tile_keys: 80 KB at head 64,
// 160 KB at layouts of 128, 192 KB at 256; one CTA per SM (registers: the producer keeps
// kHopperProducerRegs, each consumer kHopperConsumerRegs). fp8 caches also take a ring of
// hopper_raw_slots raw tiles, which the producer converts into the stages.
inline constexpr int kHopperPrefillForm = 1;  // FlashParams::form (0: the v2 forms above)
// cuda_flash_planned_form's code for v2's decode form (FlashParams::form 0 with split keys; v2's
// prefill forms report 0).
inline constexpr int kV2DecodeForm = 2;
inline constexpr int kHopperPrefillRows = 128, kHopperPrefillThreads = 384;
inline constexpr int kHopperPrefillStages = 2;
// setmaxnreg moves registers within the CTA's launch allocation (65536 / 384 threads, rounded
// down to 8: 168 each); consumers asking for more than the producer released wait forever.
inline constexpr int kHopperProducerRegs = 88, kHopperConsumerRegs = 208;
static_assert(128 * kHopperProducerRegs + 256 * kHopperConsumerRegs <=
                  kHopperPrefillThreads * (65536 / kHopperPrefillThreads / 8 * 8),
              "the roles' registers fit the launch's");
// So one CTA per SM over either cache kind, whatever its shared memory would allow (two at head
// 64): the plan's split count counts one slot per SM.
inline constexpr int kHopperPrefillCtasPerSm = 1;
static_assert(2 * kHopperPrefillThreads * (65536 / kHopperPrefillThreads / 8 * 8) > 65536,
              "the launch's registers leave no room for a second CTA");
constexpr bool hopper_head_size(int head) { return head % 16 == 0 && head >= 64 && head <= 256; }
constexpr bool hopper_prefill_head(int head_qk, int head_v) {
  return hopper_head_size(head_qk) && hopper_head_size(head_v) && head_v <= head_qk;
}
constexpr int hopper_layout_head(int head) { return (head + 63) / 64 * 64; }
constexpr int hopper_prefill_tile_keys(int head_qk, int head_v) {
  return hopper_layout_head(std::max(head_qk, head_v)) <= 128 ? 128 : 64;
}
// Whether a prefill batch whose longest sequence has max_k keys takes the Hopper form. At head 64
// the form's per-CTA fixed cost (one CTA per SM) weighs against its faster tiles when a CTA visits
// few keys. H200, 16k tokens per batch: 1k keys 316 / 217 TFLOP/s against v2's 295 / 222
// (non-causal / causal), 4k 420 / 363 against 322 / 289 (bench/results/cuda_s15_r3_*); encoder
// batches (12 heads, 32k tokens): 2k keys 374 against 310, 512 keys 232 against 259
// (cuda_s26_r2_*). So without a mask it pays from 1k keys, under a causal one (whose CTAs visit
// half the keys on average) from 4k. A window bounded on both sides (a causal sliding window, an
// encoder's symmetric one) narrower than the sequence bounds every CTA's keys to its rows' tokens
// plus the window, and from 1k such keys the form pays under either mask (head 64, causal window
// over 4k and 16k keys: 1k 262-268 against 244-248, 2k 327-343 against 276-284; 256 117-119
// against 137-138; keys within 64 of an encoder's query 55-58 against 60-65; cuda_s26_r4_*,
// _r5_*, _r6_*).
inline constexpr int kHopperHead64MinKeys = 1024;
inline constexpr int kHopperHead64MinKeysCausal = 4096;
constexpr bool hopper_prefill_takes(int head_qk, int head_v, int max_k, int group, bool causal,
                                    int window_left, int window_right) {
  if (!hopper_prefill_head(head_qk, head_v)) return false;
  if (head_qk > 64) return true;
  const int right = causal ? 0 : window_right;
  if (window_left >= 0 && right >= 0) {
    const int64_t span = int64_t((kHopperPrefillRows + group - 1) / group) + window_left + right;
    if (span < max_k) return span >= kHopperHead64MinKeys;
  }
  return max_k >= (causal ? kHopperHead64MinKeysCausal : kHopperHead64MinKeys);
}
// Dynamic shared memory: Q, the K/V stages (each at its layout's width), for fp8 `raw_slots` raw
// tiles of a K row's own bytes (the wider). The epilogue's O tile reuses Q's.
constexpr int hopper_prefill_smem_bytes(int head_qk, int head_v, bool fp8, int raw_slots) {
  const int keys = hopper_prefill_tile_keys(head_qk, head_v);
  const int wide_qk = hopper_layout_head(head_qk), wide_v = hopper_layout_head(head_v);
  return kHopperPrefillRows * wide_qk * 2 + kHopperPrefillStages * keys * (wide_qk + wide_v) * 2 +
         (fp8 ? raw_slots * keys * head_qk : 0);
}
// Static: the page ring (PageRing<4, keys>) and the stage barriers.
constexpr int hopper_prefill_static_smem_bytes(int head_qk, int head_v) {
  return 4 * (hopper_prefill_tile_keys(head_qk, head_v) * 2 * 8 + 4) + 9 * 8;
}
inline constexpr int kSm90SmemBytes = 227 * 1024;  // a CTA's shared memory on SM90
// Raw fp8 tiles: three slots keep two items in flight while one converts; one (each item copied,
// then converted) where three do not fit beside the stages (layouts of 256: 240 KB).
constexpr int hopper_raw_slots(int head_qk, int head_v) {
  return hopper_prefill_smem_bytes(head_qk, head_v, true, 3) +
                     hopper_prefill_static_smem_bytes(head_qk, head_v) <=
                 kSm90SmemBytes
             ? 3
             : 1;
}
constexpr int hopper_prefill_smem_bytes(int head_qk, int head_v, bool fp8) {
  return hopper_prefill_smem_bytes(head_qk, head_v, fp8, hopper_raw_slots(head_qk, head_v));
}
constexpr bool hopper_prefill_fits_every_head() {
  for (int qk = 64; qk <= 256; qk += 16)
    for (int v = 64; v <= qk; v += 16)
      for (bool fp8 : {false, true})
        if (hopper_prefill_smem_bytes(qk, v, fp8) + hopper_prefill_static_smem_bytes(qk, v) >
            kSm90SmemBytes)
          return false;
  return true;
}
static_assert(hopper_prefill_fits_every_head(),
              "SM90's shared memory holds the form at every head over either cache kind");
// Split-KV count (Flash-Decoding): 1 when the CTAs fill the GPU. Otherwise, first by critical
// path: waves x (key tiles per split + kCtaFixedTiles, the ramp and tail of a wave), counting two
// CTAs per SM as two slots, the smallest count on ties; this decides whether the splits run in one
// wave (a second wave of splits pays for balance at long contexts, not at short ones: 24x2k 32/8,
// 192 CTAs, page 16: one split 70 us, four 76). Within one wave the CTAs of an SM share its
// bandwidth, so the count is then the one with the least load on the busiest SM: (CTAs on it) x
// (tiles per CTA) + kCtaFixedTiles, where a CTA alone on its SM counts once only while it runs at
// most kLoneCtaTiles tiles (one CTA keeps enough bytes in flight for a short run, not through a
// long one, which costs as if its SM held two); the fewer splits on ties (fewer partials to merge).
// At least two tiles per split, and the count is trimmed so that no split is empty (shares are
// ceil(tiles / count): 512 tiles over 63 splits would leave six without a tile).
// H200 A/B against the critical-path count alone (bench/results/cuda_s5_r4_* .. _r7_*): 1x8k
// 32/4 32 splits instead of 64, bf16 19.3 -> 16.6-17.0 us, fp8 15.6 -> 14.0-14.4; 1x16k 32/4 32
// (64), 25.7 -> 22.9-24.1 us; 1x8k 32/8 16 (32), 24.0 -> 22.3-22.6 us at pages 64/128. Lone CTAs
// of 16 tiles (1x32k 32/4 at 32 splits) gained 2.5 us at pages 64/128 but lost up to 3 us with
// fp8 at page 16, and of 63 tiles (1x128k) lost 2.4-17 us: hence the limit of 8.
// kCtaFixedTiles: ~12 us of ramp and tail against ~2 us per 64-key tile (a fit over 1x32k and
// 16x8k, bench/NOTES.md v2j) is ~6 tiles; 4 picks the same counts at every benchmark shape.
// kLoneCtaTilesPaged: a lone decode-form CTA over a 16-bit cache whose pages hold whole tiles
// (each tile one contiguous run, three in flight) keeps its pace through 16 tiles: 1x32k 32/4 at
// 32 splits ran 31.9 / 25.6 us (write / clean L2) against 64 splits' 33.0 / 26.9 at page 128,
// 32.2 / 26.1 against 33.2 / 27.2 at page 64, but 35.1 / 28.9 against 33.3 / 27.3 at page 16
// (each tile four 4 KB runs); fp8 (two stages) lost at pages 16 and 64 and, with a clean L2, at
// 128 (v2n's form on the H200, sweep s7 r11; today's form at head 128: below).
// The fp8 decode form at head 256 takes kLoneCtaTilesPaged's count too over pages of whole
// (64-key, 32 KB) tiles. H200, two alternating rounds (s20 r3): 1x32k 32/4 40.4-40.7 -> 36.1-36.7
// us, 2x16k and 4x8k 32/4 -1.0..-2.0 us, 1x16k 32/8 -0.7..-1.0 us at pages 64 and 128 (other
// shapes keep their counts); at page 16 the same rule cost up to 1.2 us, and at head 192 up to 1.3
// us over whole-tile pages (3.7 at page 16), so those keep kLoneCtaTiles.
// At head 128 the one-row fp8 decode (the 16-bit plan's decode form, 128-key fp8 tiles) takes it
// over pages of whole 128-key tiles: H100, two rounds of a split sweep (s63 call 2), 1x32k 32/4 at
// page 128 ran 32 splits in 18.23-18.27 us a layer in the layer loop against 64's 18.61-18.68,
// and 3.2% / 2.7% faster under the write / clean-L2 protocols; at page 64 32 splits were level in
// the loop and 2% slower with a clean L2, at page 16 11% slower, so those keep 64. Speculative
// rows at head 128 and heads 64..96 were not measured and keep kLoneCtaTiles.
// Where the batch lets the default count's grid copy its first tiles early (early_copies_pay),
// the decode form at heads up to 128 keeps that count over whole-tile pages: H200, three rounds
// (s66 call 2), 1x32k 32/4 at 64 splits against 32 ran 0.962 / 0.981x a layer in the layer loop
// at bf16 pages 64 / 128 and 0.908x at fp8 page 128 (single calls 0.992-1.019x); H100, the plan
// itself against --early-copies never, three rounds (s67 call 1): 0.959 / 0.965x and 0.907x.
constexpr bool fp8_decode_paged_count(int head_qk, int head_v) {
  const int head = std::max(head_qk, head_v);
  return head == 128 || head == 256;
}
// Whether a launch of a plan's forms takes the plan's kLoneCtaTilesPaged count over a cache of
// `block_size`-key pages: 16-bit caches where a page holds whole tiles of the plan's form
// (`plan_tile_keys`), fp8 ones where it holds whole tiles of the fp8 decode form at the heads
// fp8_decode_paged_count names (at heads up to 128 the 16-bit plan's decode form runs 128-key
// fp8 tiles; a prefill plan's two counts are one).
constexpr bool takes_paged_count(bool fp8, int head_qk, int head_v, int block_size,
                                 int plan_tile_keys) {
  return fp8 ? fp8_decode_paged_count(head_qk, head_v) &&
                   block_size % tile_keys(head_qk, head_v, true, true) == 0
             : block_size % plan_tile_keys == 0;
}
inline constexpr int kCtaFixedTiles = 4;
inline constexpr int kLoneCtaTiles = 8;
inline constexpr int kLoneCtaTilesPaged = 16;
constexpr int num_splits_heuristic(int64_t ctas, int kv_tiles, int num_sms, int per_sm,
                                   int lone_tiles = kLoneCtaTiles) {
  const int64_t slots = int64_t(num_sms) * per_sm;
  if (ctas <= 0 || ctas * 10 >= slots * 8 || kv_tiles < 4) return 1;
  const int max_splits = std::min(kMaxSplits, kv_tiles / 2);
  auto len = [&](int s) { return int64_t(kv_tiles + s - 1) / s; };
  int best = 1;
  int64_t best_cost = -1;
  for (int s = 1; s <= max_splits; ++s) {
    const int64_t cost = (ctas * s + slots - 1) / slots * (len(s) + kCtaFixedTiles);
    if (best_cost < 0 || cost < best_cost) {
      best = s;
      best_cost = cost;
    }
  }
  if (ctas * best <= slots) {
    best_cost = -1;
    for (int s = 1; s <= max_splits && ctas * s <= slots; ++s) {
      int64_t on_sm = (ctas * s + num_sms - 1) / num_sms;
      if (on_sm == 1 && len(s) > lone_tiles) on_sm = std::min(2, per_sm);
      const int64_t cost = on_sm * len(s) + kCtaFixedTiles;
      if (best_cost < 0 || cost < best_cost) {
        best = s;
        best_cost = cost;
      }
    }
  }
  const int per_split = (kv_tiles + best - 1) / best;
  return (kv_tiles + per_split - 1) / per_split;
}

// Ragged decode batches (say one 64k-key sequence among 63 of 1k keys). One split count serves
// every sequence of a uniform plan, so the count that suits the short ones leaves the long one's
// CTAs running alone long after the rest: 64 x 8 KV heads fill the GPU, the heuristic above
// splits nothing, and one CTA streams the 64k keys. Here each sequence takes its own count,
// ceil(visible keys / chunk) (at most kMaxSplits), so every CTA runs at most `chunk` keys; the
// kernel derives each CTA's (sequence, split) from seqused_k and the chunk (flash_fwd.cuh,
// ragged_item) with the same two functions as the plan.
// The chunk is the candidate with the least modelled time, in tiles at the plan's CTAs per SM:
// max(all the CTAs' tiles + kCtaFixedTiles each over the GPU's slots, the longest CTA +
// kCtaFixedTiles), plus kCombineTiles when anything splits. It is taken only below half the
// uniform count's modelled time (kRaggedGain), so uniform and near-uniform batches keep the plans
// the benchmarks tuned. CUDA_FLASH's decode form (heads up to 128; 256 over fp8) and CUDA_MLA's
// Hopper form have ragged instantiations; other forms keep the uniform count. H200
// (bench/results/cuda_s18_r3_*, write protocol): the ragged grid's batches ran 2.2-12.2x faster
// (1x64k + 63x1k 32/4 bf16: 1018 -> 83 us); 1x32k + 1x1k ran 0.94-1.18x under the threshold 0.8 it
// started with, and keeps the uniform count under 0.5 (s18 r4).
inline constexpr int kCombineTiles = 2;  // the combine's launch and pass, ~3-4 us (v2j)
inline constexpr double kRaggedGain = 0.5;
struct RaggedSplits {
  int chunk_tiles = 0;  // 0: keep the uniform count
  int items = 0;        // sum over sequences of their split counts: the grid's z extent
  int max_splits = 1;   // the workspace's split extent
};
// The keys a ragged plan counts for a sequence of `len` keys: a window's rows (at most
// kBlockMDecode of them in a decode-form CTA) see window_left + kBlockMDecode at most.
// A chunk bounds the keys a causal row sees behind it as a window of chunk - 1 does: the decode
// form's kChunk plans count the narrower of the two.
ATTNKIT_HD constexpr int visible_window(int window_left, int chunk) {
  return chunk > 0 && chunk - 1 < window_left ? chunk - 1 : window_left;
}
ATTNKIT_HD constexpr int ragged_visible_keys(int len, int window_left) {  // no overflow
  return len - kBlockMDecode < window_left ? len : window_left + kBlockMDecode;
}
// Splits of a sequence of `n` visible keys (or tiles) at `chunk` per split: 1 to `most`.
ATTNKIT_HD constexpr int ragged_count(int n, int chunk, int most = kMaxSplits) {
  const int c = (n + chunk - 1) / chunk;
  return c < 1 ? 1 : c > most ? most : c;
}
// Modelled time, in tiles, of a plan where sequence s runs count(s) items of ctas_per_item CTAs
// each (its row blocks x KV heads) over tiles[s] visible tiles (the comment above).
template <typename Count>
int64_t ragged_cost(const int* tiles, int num_seqs, int ctas_per_item, int64_t slots, Count count) {
  int64_t sum = 0, longest = 0;
  bool split = false;
  for (int s = 0; s < num_seqs; ++s) {
    const int n = count(s);
    const int64_t len = (tiles[s] + n - 1) / n;
    sum += n * (len + kCtaFixedTiles);
    longest = std::max(longest, len);
    split = split || n > 1;
  }
  return std::max((sum * ctas_per_item + slots - 1) / slots, longest + kCtaFixedTiles) +
         (split ? kCombineTiles : 0);
}
inline RaggedSplits ragged_splits(const int* tiles, int num_seqs, int ctas_per_item, int num_sms,
                                  int per_sm, int uniform_splits) {
  RaggedSplits r;
  int t_max = 0;
  for (int s = 0; s < num_seqs; ++s) t_max = std::max(t_max, tiles[s]);
  if (num_seqs < 2 || t_max < 4) return r;
  const int64_t slots = int64_t(num_sms) * per_sm;
  auto cost = [&](auto count) { return ragged_cost(tiles, num_seqs, ctas_per_item, slots, count); };
  const int64_t uniform = cost([&](int) { return uniform_splits; });
  int64_t best = -1;
  for (int k = 1; k <= kMaxSplits; ++k) {
    const int chunk = (t_max + k - 1) / k;
    if (chunk < 2) break;
    if (k > 1 && chunk == (t_max + k - 2) / (k - 1)) continue;  // the same chunk as k - 1
    const int64_t c = cost([&](int s) { return ragged_count(tiles[s], chunk); });
    if (best < 0 || c < best) {
      best = c;
      r.chunk_tiles = chunk;
    }
  }
  if (best < 0 || double(best) >= kRaggedGain * double(uniform)) return RaggedSplits{};
  for (int s = 0; s < num_seqs; ++s) {
    const int n = ragged_count(tiles[s], r.chunk_tiles);
    r.items += n;
    r.max_splits = std::max(r.max_splits, n);
  }
  if (r.max_splits == 1) return RaggedSplits{};  // nothing splits: the uniform plan's grid
  return r;
}

// Forms without a ragged instantiation (the prefill forms, which also run decode batches at heads
// over 128; CUDA_MLA's wide form) keep one count for every sequence, but a skewed batch still
// takes it from the same model: the count with the least modelled time, when that is under
// kSkewedGain of the heuristic's count (num_splits_heuristic sees only the longest sequence and
// the CTA count, so 1x64k + 63x1k fills the GPU and stays unsplit). Short sequences then run
// several near-empty splits each, which the model charges kCtaFixedTiles apiece. At 0.5 (the
// decode form's kRaggedGain) the Hopper form at head 256 kept 1 split for 2x16k + 126x512 32/8
// bf16, which the model put under 0.65 of that with 2 (the host test's case); 2 ran in 0.63 of
// its time (cuda_s21_r4_*). With 0.65 (H200, write protocol, cuda_s21_r5_*): that batch 405 ->
// 255 us, 1x32k + 1x1k 32/8 111 -> 86 (16 splits for 8); every other row of the skewed grid kept
// its count and time, under v3 and v2.
inline constexpr double kSkewedGain = 0.65;
inline int skewed_uniform_splits(const int* tiles, int num_seqs, int ctas_per_item, int num_sms,
                                 int per_sm, int uniform_splits) {
  int t_max = 0;
  for (int s = 0; s < num_seqs; ++s) t_max = std::max(t_max, tiles[s]);
  if (num_seqs < 2 || t_max < 4) return uniform_splits;
  const int64_t slots = int64_t(num_sms) * per_sm;
  auto cost = [&](int n) {
    return ragged_cost(tiles, num_seqs, ctas_per_item, slots, [n](int) { return n; });
  };
  const int64_t uniform = cost(uniform_splits);
  int best = uniform_splits;
  int64_t best_cost = -1;
  // at most kMaxSplits, two tiles per split, and num_seqs x splits within the grid's z extent
  for (int n = 1; n <= std::min({kMaxSplits, t_max / 2, 65535 / num_seqs}); ++n)
    if (const int64_t c = cost(n); best_cost < 0 || c < best_cost) {
      best = n;
      best_cost = c;
    }
  return double(best_cost) < kSkewedGain * double(uniform) ? best : uniform_splits;
}

// Chunked-prefill steps mix decodes (at most `decode_rows` packed rows a sequence: kBlockMDecode
// for CUDA_FLASH's decode form, FlashGeometry::part_rows for a family's own forms) with prefill
// chunks. Planned as one batch, a prefill form runs every sequence (a 64- or 128-row CTA for each
// decode's few rows; CUDA_MLA's grid takes the longest chunk's row blocks for every sequence) with
// one split count for both kinds: up to 3.7x slower than the two kinds as separate calls on the
// H200 (bench/NOTES.md, sessions 28 and 29). So a batch whose decodes come first (vLLM's order) or
// last is planned and launched as two parts, [0, k) and [k, n); other orders stay one part, as
// splitting a prefill run around a decode would leave each piece fewer CTAs. Sequences with no
// query rows go with the next run (trailing ones with the last). `group`: query heads per KV
// head (packed rows = query tokens x group).
//
// A decode run that reads less than `min_decode_bytes` (CudaFlashOptions::part_min_decode_bytes)
// stays in the one launch. `key_bytes`: what one key of a sequence reads, every KV head's K and V
// rows at 16 bits (the cache dtype arrives with run()).
inline std::vector<std::pair<int, int> > batch_parts(const int32_t* cu_seqlens_q,
                                                     const int32_t* seqused_k, int num_seqs,
                                                     int group, int decode_rows, int64_t key_bytes,
                                                     int64_t min_decode_bytes) {
  std::vector<std::pair<int, int> > runs;
  int kind = -1;  // of the current run: 1 decode-sized, 0 not
  for (int s = 0; s < num_seqs; ++s) {
    const int64_t rows = int64_t(cu_seqlens_q[s + 1] - cu_seqlens_q[s]) * group;
    if (rows == 0) continue;  // joins a run: runs start where the previous one ended
    const int k = int(rows <= decode_rows);
    if (k != kind) runs.push_back({runs.empty() ? 0 : runs.back().second, s});
    kind = k;
    runs.back().second = s + 1;
  }
  if (runs.size() != 2) return {{0, num_seqs}};
  runs.back().second = num_seqs;
  const auto [d0, d1] = runs[kind == 1 ? 1 : 0];  // the two runs' kinds alternate
  int64_t decode_bytes = 0;
  for (int s = d0; s < d1; ++s) decode_bytes += int64_t(seqused_k[s]) * key_bytes;
  if (decode_bytes < min_decode_bytes) return {{0, num_seqs}};
  return runs;
}

// Chunked local attention (docs/semantics.md §4) as virtual sequences: a sequence's query rows
// are cut where their key positions cross a chunk boundary, and each piece runs as a sequence of
// its own over its chunk's keys only, [C c, min(k, C (c + 1))), its block-table row starting at
// the chunk's first block (the chunk a multiple of the block size). The kernels then run the
// pieces with the masks they have: a piece's last row is its last key, so each row keeps its
// distance to every key (windows, ALiBi) under bottom-right alignment. Rows before key 0 (more
// query rows than keys) form one piece of no keys: their chunk holds none. Host and device
// compute the same pieces from (q, k, C).
ATTNKIT_HD constexpr int chunk_index(int64_t pos, int chunk) {  // -1: every position before 0
  return pos < 0 ? -1 : int(pos / chunk);
}
// Pieces of a sequence of q query rows over k keys (q == 0: none).
ATTNKIT_HD constexpr int chunk_pieces(int q, int k, int chunk) {
  return q <= 0 ? 0 : chunk_index(int64_t(k) - 1, chunk) - chunk_index(int64_t(k) - q, chunk) + 1;
}
struct ChunkPiece {
  int row0 = 0, rows = 0;  // the sequence's query rows [row0, row0 + rows)
  int keys = 0;            // the piece's keys (its seqused_k)
  int64_t first_key = 0;   // of the sequence's: where the piece's block-table row starts
};
// Piece j (0 <= j < chunk_pieces(q, k, chunk)) of that sequence.
ATTNKIT_HD constexpr ChunkPiece chunk_piece(int q, int k, int chunk, int j) {
  const int64_t p0 = int64_t(k) - q;  // the first row's key position
  const int c = chunk_index(p0, chunk) + j;
  auto row_at = [&](int cc) {  // the first row of chunk cc
    if (cc <= chunk_index(p0, chunk)) return 0;
    const int64_t r = int64_t(cc) * chunk - p0;
    return int(r < q ? r : q);
  };
  ChunkPiece piece;
  piece.row0 = row_at(c);
  piece.rows = row_at(c + 1) - piece.row0;  // the last piece's next chunk starts at row q
  if (c >= 0) {
    piece.first_key = int64_t(c) * chunk;
    const int64_t end = piece.first_key + chunk;
    piece.keys = int((end < k ? end : int64_t(k)) - piece.first_key);
  }
  return piece;
}

}  // namespace attnkit::cuda_flash
