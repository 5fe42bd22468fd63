// CPU_FLASH: tiled online-softmax attention for serving on a CPU (docs/semantics.md), with
// runtime ISA dispatch (AMX, AVX-512 + bf16 dot products, AVX-512, AVX2, scalar), a thread pool
// over (request, KV head, query block, KV split) and an LSE merge for split long decodes; decode
// items take several KV heads in lockstep (kernel.hpp, WorkItem).
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "attnkit/attention.hpp"

namespace attnkit {

namespace cpu_flash {
enum class Isa { kScalar, kAvx2, kAvx512, kAvx512Bf16, kAmxBf16 };
inline constexpr Isa kIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Bf16,
                                Isa::kAmxBf16};  // slowest first
std::string_view to_string(Isa isa);
// Best variant this CPU and OS support: AVX-512 needs F/BW/VL/DQ (+AVX512_BF16 for the bf16
// variant), AVX2 needs AVX2/FMA/F16C; AMX needs AMX-TILE/AMX-BF16 and AVX512_VBMI (fp8 staging)
// on top of the bf16 variant, and the OS's permission for the tile state (requested once per
// process).
Isa detect_isa();
bool isa_supported(Isa isa);
std::vector<Isa> supported_isas();  // every variant isa_supported() allows, slowest first
// Where AVX512_BF16 runs: vdpbf16ps's issue rate over vfmadd231ps's on this core, measured once
// per process (it does twice an FMA's multiply-adds).
std::optional<double> bf16_dot_issue_ratio();
// Whether bf16 items above decode size run their products on vdpbf16ps (AVX512_BF16 issuing at
// >= 0.75x the FMA rate: 1.5x the multiply-adds, as its packing costs about what the fp32 path's
// conversions do) rather than on the fp32 path. Decode-sized items take fp32 FMAs either way.
bool bf16_dots_pay();
// fp8 codes (`rows` x d, d a multiple of 16) -> bf16 bits, as the AVX512_BF16 variant stages fp8
// caches: through its AVX512_VBMI byte tables (`byte_tables`; every VBMI CPU takes them) or its
// word tables (AVX512_BF16 CPUs without VBMI, such as Cooper Lake). Here so that a test runs both
// on one machine; throws Unsupported where the variant, or VBMI for the byte tables, is missing.
void stage_fp8_as_bf16(KvCacheDType dt, bool byte_tables, const uint8_t* codes, int rows, int d,
                       uint16_t* out);
// KV heads that a decode work item of `head_rows` query rows a KV head (tokens x GQA group) takes
// in lockstep, in a batch of `single_items` one-head items on `threads` threads: up to 32 rows
// (heads of at most `max_head_rows` rows, 8 at most; 0: none), and only while the threads keep
// about four items each. The planner's rule; the bench's pattern read follows it.
int lockstep_heads(int head_rows, int64_t single_items, int threads, int kv_heads,
                   int max_head_rows);
// The most rows a head may have to take lockstep by default (CpuFlashOptions::lockstep_heads) on
// `threads` threads: 8 on AMD cores and wherever the threads are few (kLockstepFewThreads), 1
// elsewhere. Measured call by call in one process (bench/NOTES.md, sessions 38 and 41): on a
// 2-vCPU Zen 4 VM lockstep gained at every such row (bf16 GQA 32/8 +13-55%, fp8 +17-23%), on a
// 2-vCPU Intel VM (model 207) at the multi-row GQA rows (bf16 GQA 32/8 +2-9%, fp16 +5-9%, fp8
// 32/8 +1-4%, the ragged batch +5%), on the H200 host's 16 Intel cores only at MHA's one-row heads
// (+26-32%), losing at the others (fp8 GQA 32/8 -7..-9%, bf16 GQA 32/8 pages 64/128 -2..-6%, the
// ragged batch -4..-8%). The host's cores with the pool cut to 2 / 4 / 8 threads (s41): bf16 GQA
// 32/8 page 16 +10% / +1% / -6%, fp8 32/4 +21% / -3% / +2%, fp8 32/8 +2% / 0 / -4%.
inline constexpr int kLockstepFewThreads = 4;
int lockstep_max_head_rows(int threads);
// Whether lockstep items prefetch their next tile in address order (kernel_impl.hpp) rather than
// one head ahead with the runs walked in turns: on AMD cores, where software prefetches fetch
// the paged runs line by line; on Intel cores the hardware prefetchers follow each 4 KiB run once
// its first lines go out, and the turns read faster there (bench/NOTES.md, session 37; on the
// 2-vCPU Intel VM, address order read 0.78-0.89x of the turns at lockstep rows, s41).
bool lockstep_prefetch_in_order();
}  // namespace cpu_flash

struct CpuFlashOptions {
  std::optional<cpu_flash::Isa> isa;  // default: detect_isa(); an unsupported one throws
  int num_threads = 0;  // 0: ATTNKIT_NUM_THREADS, else std::thread::hardware_concurrency()
  // bf16 items above decode size on vdpbf16ps (variants with AVX512_BF16); default:
  // cpu_flash::bf16_dots_pay(). Tests force both ways.
  std::optional<bool> bf16_dots;
  // Decode-sized items of several KV heads in lockstep (WorkItem::heads): true for heads of up to
  // 8 rows, false: one KV head an item; default: heads of up to
  // cpu_flash::lockstep_max_head_rows(threads) rows. Tests force both ways.
  std::optional<bool> lockstep_heads;
};

std::unique_ptr<AttentionBackend> make_cpu_flash_backend();
std::unique_ptr<AttentionBackend> make_cpu_flash_backend(const CpuFlashOptions& options);

}  // namespace attnkit
