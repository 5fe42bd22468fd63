// Memory spaces for the serving loop: host, or a CUDA device (when built with CUDA).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "attnkit/kv.hpp"

namespace attnkit {

// A KvAllocator plus a stream and a barrier: what the loop needs to stage inputs and time runs.
class RunMemory : public KvAllocator {
 public:
  virtual bool is_host() const = 0;
  virtual void* stream() { return nullptr; }
  virtual void synchronize() {}
  // Fills `bytes` with 0xFF (a NaN for fp32/fp16/bf16): poisons outputs before a run.
  virtual void fill_nan(void* p, size_t bytes) = 0;
  // Bytes that can be allocated now (host: MemAvailable; CUDA: the device's free memory), or
  // nullopt where that cannot be read.
  virtual std::optional<uint64_t> available_bytes() const = 0;
};

// Throws OutOfMemory, naming the cache's size and what is available, when a KV cache of
// `num_blocks` blocks (and its scales) would take more than nine tenths of the memory available:
// the storage is written whole when it is allocated, so on the host a cache past the free
// memory meets the kernel's OOM killer instead of an error, and the rest of the run (the
// activations, the verification's copies of K/V) needs room too.
void check_kv_fits(const RunMemory& m, int64_t num_blocks, int64_t bytes_per_block,
                   int64_t scale_bytes);

std::unique_ptr<RunMemory> make_host_memory();
// Throws Unsupported in a build without CUDA or when the CUDA runtime reports an error.
std::unique_ptr<RunMemory> make_cuda_memory();

// An allocation in a RunMemory, released on destruction.
class Buffer {
 public:
  Buffer() = default;
  Buffer(RunMemory& m, size_t bytes)
      : m_(&m), bytes_(bytes), p_(m.allocate(bytes ? bytes : 1, 256)) {}
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    swap(o);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (m_ && p_) m_->deallocate(p_, bytes_ ? bytes_ : 1);
  }
  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }

 private:
  void swap(Buffer& o) {
    std::swap(m_, o.m_);
    std::swap(bytes_, o.bytes_);
    std::swap(p_, o.p_);
  }
  RunMemory* m_ = nullptr;
  size_t bytes_ = 0;
  void* p_ = nullptr;
};

}  // namespace attnkit
