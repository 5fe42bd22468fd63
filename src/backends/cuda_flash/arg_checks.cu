// The opt-in device checks of run()'s and write_kv()'s device arrays (CudaFlashOptions::
// check_args): the rules of docs/semantics.md §6 that a host plan cannot see, because the arrays
// the kernels read live on the device. One CTA; of all violations it reports the one the CPU
// backends' checks (backends/common/validate.cpp), walking the same order, would name first: the
// smallest (phase, sequence, rule, entry) key (launch.hpp).
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda_flash/launch.hpp"

namespace attnkit::cuda_flash {
namespace {

constexpr int kCheckThreads = 256;

// A thread's first violation: its key and the values its message names.
struct Violation {
  uint64_t key = ~0ull;
  int64_t v[3] = {0, 0, 0};
  __device__ void offer(int phase, int64_t seq, int rule, int64_t entry, int64_t a, int64_t b = 0,
                        int64_t c = 0) {
    const uint64_t k =
        uint64_t(phase) << 60 | uint64_t(seq) << 32 | uint64_t(rule) << 28 | uint64_t(entry);
    if (k < key) {
      key = k;
      v[0] = a;
      v[1] = b;
      v[2] = c;
    }
  }
};

// Every thread offers its violation; the smallest key wins and its thread writes the report.
__device__ void report_smallest(const Violation& x, int64_t* report) {
  __shared__ unsigned long long best;
  if (threadIdx.x == 0) best = ~0ull;
  __syncthreads();
  if (x.key != ~0ull) atomicMin(&best, (unsigned long long)x.key);
  __syncthreads();
  if (best == ~0ull ? threadIdx.x == 0 : x.key == best) {  // every word: the host reads them all
    report[0] = best == ~0ull ? -1 : int64_t(x.key);
    for (int i = 0; i < 3; ++i) report[1 + i] = x.v[i];
  }
}

// Phase 0: ALiBi slopes finite, sinks finite or -inf, scales finite and > 0 (as
// backend_checks::check_layer and the cache view's check); a value goes out as its bits.
__device__ void check_values(const ValueCheckLaunch& p, Violation& x) {
  auto offer = [&](int rule, int i, float f) {
    x.offer(kCheckValues, 0, rule, i, int64_t(__float_as_uint(f)));
  };
  for (int i = threadIdx.x; i < p.num_heads; i += kCheckThreads) {
    if (p.slopes && !isfinite(p.slopes[i])) offer(kCheckSlope, i, p.slopes[i]);
    if (p.sinks && (isnan(p.sinks[i]) || (isinf(p.sinks[i]) && p.sinks[i] > 0.f)))
      offer(kCheckSink, i, p.sinks[i]);
  }
  for (int i = threadIdx.x; i < p.num_scales; i += kCheckThreads) {
    if (p.k_scale && !(p.k_scale[i] > 0.f && isfinite(p.k_scale[i])))
      offer(kCheckKScale, i, p.k_scale[i]);
    if (p.v_scale && !(p.v_scale[i] > 0.f && isfinite(p.v_scale[i])))
      offer(kCheckVScale, i, p.v_scale[i]);
  }
}

__global__ void check_batch_kernel(const BatchCheckLaunch p) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  Violation x;
  check_values(p.values, x);
  if (threadIdx.x == 0) {
    if (p.cu_seqlens_q[0] != 0) x.offer(kCheckBatch, 0, kCheckCuFirst, 0, p.cu_seqlens_q[0]);
    if (p.cu_seqlens_q[p.num_seqs] != p.total_q)
      x.offer(kCheckBatch, 0, kCheckCuTotal, 0, p.cu_seqlens_q[p.num_seqs]);
    if (p.mm_offsets && p.mm_offsets[0] != 0)
      x.offer(kCheckMm, 0, kCheckMmFirst, 0, p.mm_offsets[0]);
    if (p.mm_offsets && p.mm_offsets[p.num_seqs] != p.mm_count)
      x.offer(kCheckMm, p.num_seqs, kCheckMmCount, 0, p.mm_offsets[p.num_seqs], p.mm_count);
  }
  const int64_t row_capacity = int64_t(p.block_table_stride) * p.block_size;
  for (int s = warp; s < p.num_seqs; s += kCheckThreads / 32) {
    const int q_len = p.cu_seqlens_q[s + 1] - p.cu_seqlens_q[s];
    const int k_len = p.seqused_k[s];
    if (lane == 0) {
      if (q_len < 0) x.offer(kCheckBatch, s, kCheckQDecreasing, 0, q_len);
      if (q_len > p.max_seqlen_q) x.offer(kCheckBatch, s, kCheckQMax, 0, q_len);
      if (k_len < 0) x.offer(kCheckBatch, s, kCheckKNegative, 0, k_len);
      if (k_len > p.max_seqlen_k) x.offer(kCheckBatch, s, kCheckKMax, 0, k_len);
      if (k_len > row_capacity) x.offer(kCheckBatch, s, kCheckKRow, 0, k_len);
    }
    // The entries a valid length reads (a rule above already names an invalid one).
    const int64_t used = (int64_t(max(0, k_len)) + p.block_size - 1) / p.block_size;
    const int32_t* row = p.block_table + int64_t(s) * p.block_table_stride;
    for (int64_t c = lane; c < min(used, int64_t(p.block_table_stride)); c += 32) {
      const int32_t b = row[c];
      if (b < 0 || b >= p.num_blocks) {
        x.offer(kCheckBatch, s, kCheckBlock, c, b);
        break;  // this lane's later entries come after it
      }
    }
    if (!p.mm_offsets) continue;
    // PrefixLM ranges [start, end): each non-empty, at or after the previous one's end (0 for
    // the first), ending within seqused_k. Reads stay inside the plan's ranges (kCheckMmCount
    // and the offsets rule name offsets that leave them).
    const int32_t r0 = p.mm_offsets[s], r1 = p.mm_offsets[s + 1];
    if (lane == 0 && r1 < r0) x.offer(kCheckMm, s, kCheckMmOffsets, 0, r0, r1);
    const int32_t lo = max(r0, 0), hi = min(r1, p.mm_count);
    for (int32_t r = lo + lane; r < hi; r += 32) {
      const int32_t start = p.mm_ranges[2 * r], end = p.mm_ranges[2 * r + 1];
      const int32_t prev_end = r == lo ? 0 : p.mm_ranges[2 * r - 1];
      if (start < prev_end || end <= start) {
        x.offer(kCheckMm, s, kCheckMmOrder, 2 * int64_t(r - r0), start, end, prev_end);
        break;
      }
      if (end > k_len) {
        x.offer(kCheckMm, s, kCheckMmPastSeqused, 2 * int64_t(r - r0) + 1, start, end, k_len);
        break;
      }
    }
  }
  report_smallest(x, p.report);
}

__global__ void check_slots_kernel(const SlotCheckLaunch p) {
  Violation x;
  check_values(p.values, x);
  for (int64_t t = threadIdx.x; t < p.num_tokens; t += kCheckThreads) {
    const int64_t slot = p.slot_mapping[t];
    if (slot < -1 || slot >= p.slots) {
      x.offer(kCheckBatch, t >> 28, 0, t & (kCheckMaxEntry - 1), slot);
      break;
    }
  }
  report_smallest(x, p.report);
}

}  // namespace

void launch_check_batch(const BatchCheckLaunch& p, void* stream) {
  check_batch_kernel<<<1, kCheckThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
}

void launch_check_slots(const SlotCheckLaunch& p, void* stream) {
  check_slots_kernel<<<1, kCheckThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
}

}  // namespace attnkit::cuda_flash
