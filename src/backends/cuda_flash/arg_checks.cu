// The opt-in device checks of run()'s and write_kv()'s device arrays (CudaFlashOptions::
// check_args): the rules of docs/semantics.md §6 that a host plan cannot see, because the arrays
// the kernels read live on the device. One CTA; of all violations it reports the one the CPU
// backends' checks (backends/common/validate.cpp), walking the same order, would name first: the
// smallest (sequence, rule, entry) key, or the first bad slot.
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda_flash/launch.hpp"

namespace attnkit::cuda_flash {
namespace {

constexpr int kCheckThreads = 256;

__device__ __forceinline__ uint64_t check_key(int64_t seq, int rule, int64_t entry) {
  return uint64_t(seq) << 32 | uint64_t(rule) << 28 | uint64_t(entry);
}

// Every thread offers its first violation (key, value); the smallest key wins and its thread
// writes the report.
__device__ void report_smallest(uint64_t key, int64_t value, int64_t* report) {
  __shared__ unsigned long long best;
  if (threadIdx.x == 0) best = ~0ull;
  __syncthreads();
  if (key != ~0ull) atomicMin(&best, (unsigned long long)key);
  __syncthreads();
  if (best == ~0ull) {
    if (threadIdx.x == 0) {  // both words: the host reads the whole report back
      report[0] = -1;
      report[1] = 0;
    }
  } else if (key == best) {
    report[0] = int64_t(key);
    report[1] = value;
  }
}

__global__ void check_batch_kernel(const BatchCheckLaunch p) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  uint64_t key = ~0ull;
  int64_t value = 0;
  auto offer = [&](int64_t seq, int rule, int64_t entry, int64_t v) {
    const uint64_t k = check_key(seq, rule, entry);
    if (k < key) {
      key = k;
      value = v;
    }
  };
  if (threadIdx.x == 0) {
    if (p.cu_seqlens_q[0] != 0) offer(0, kCheckCuFirst, 0, p.cu_seqlens_q[0]);
    if (p.cu_seqlens_q[p.num_seqs] != p.total_q)
      offer(0, kCheckCuTotal, 0, p.cu_seqlens_q[p.num_seqs]);
  }
  const int64_t row_capacity = int64_t(p.block_table_stride) * p.block_size;
  for (int s = warp; s < p.num_seqs; s += kCheckThreads / 32) {
    const int q_len = p.cu_seqlens_q[s + 1] - p.cu_seqlens_q[s];
    const int k_len = p.seqused_k[s];
    if (lane == 0) {
      if (q_len < 0) offer(s, kCheckQDecreasing, 0, q_len);
      if (q_len > p.max_seqlen_q) offer(s, kCheckQMax, 0, q_len);
      if (k_len < 0) offer(s, kCheckKNegative, 0, k_len);
      if (k_len > p.max_seqlen_k) offer(s, kCheckKMax, 0, k_len);
      if (k_len > row_capacity) offer(s, kCheckKRow, 0, k_len);
    }
    // The entries a valid length reads (a rule above already names an invalid one).
    const int64_t used = (int64_t(max(0, k_len)) + p.block_size - 1) / p.block_size;
    const int32_t* row = p.block_table + int64_t(s) * p.block_table_stride;
    for (int64_t c = lane; c < min(used, int64_t(p.block_table_stride)); c += 32) {
      const int32_t b = row[c];
      if (b < 0 || b >= p.num_blocks) {
        offer(s, kCheckBlock, c, b);
        break;  // this lane's later entries come after it
      }
    }
  }
  report_smallest(key, value, p.report);
}

__global__ void check_slots_kernel(const SlotCheckLaunch p) {
  uint64_t key = ~0ull;
  int64_t value = 0;
  for (int64_t t = threadIdx.x; t < p.num_tokens; t += kCheckThreads) {
    const int64_t slot = p.slot_mapping[t];
    if (slot < -1 || slot >= p.slots) {
      key = uint64_t(t);
      value = slot;
      break;
    }
  }
  report_smallest(key, value, p.report);
}

}  // namespace

void launch_check_batch(const BatchCheckLaunch& p, void* stream) {
  check_batch_kernel<<<1, kCheckThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
}

void launch_check_slots(const SlotCheckLaunch& p, void* stream) {
  check_slots_kernel<<<1, kCheckThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
}

}  // namespace attnkit::cuda_flash
