#include "runtime/memory.hpp"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <string>

#include "attnkit/error.hpp"

#ifdef ATTNKIT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace attnkit {
namespace {

class HostMemory final : public RunMemory {
 public:
  bool is_host() const override { return true; }
  void* allocate(size_t bytes, size_t alignment) override {
    return host_kv_allocator().allocate(bytes, alignment);
  }
  void deallocate(void* p, size_t bytes) override { host_kv_allocator().deallocate(p, bytes); }
  void fill_zero(void* p, size_t bytes) override { std::memset(p, 0, bytes); }
  void fill_nan(void* p, size_t bytes) override { std::memset(p, 0xFF, bytes); }
  std::optional<uint64_t> available_bytes() const override {
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit)
      if (key == "MemAvailable:") return kib * 1024;
    return std::nullopt;
  }
  void copy_from_host(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
};

#ifdef ATTNKIT_WITH_CUDA
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Unsupported(fmt::format("CUDA runtime error in {}: {}", what, cudaGetErrorString(e)));
}

class CudaMemory final : public RunMemory {
 public:
  CudaMemory() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream"); }
  ~CudaMemory() override { cudaStreamDestroy(stream_); }
  bool is_host() const override { return false; }
  void* stream() override { return stream_; }
  void synchronize() override { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  void* allocate(size_t bytes, size_t) override {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();
      throw OutOfMemory(fmt::format("cudaMalloc of {} bytes failed", bytes));
    }
    return p;
  }
  void deallocate(void* p, size_t) override { cudaFree(p); }
  void fill_zero(void* p, size_t bytes) override {
    check(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemsetAsync");
  }
  void fill_nan(void* p, size_t bytes) override {
    check(cudaMemsetAsync(p, 0xFF, bytes, stream_), "cudaMemsetAsync");
  }
  std::optional<uint64_t> available_bytes() const override {
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
      cudaGetLastError();
      return std::nullopt;
    }
    return free;
  }
  void copy_from_host(void* dst, const void* src, size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    synchronize();  // the host source may be reused right after
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    synchronize();
  }

 private:
  cudaStream_t stream_{};
};
#endif

}  // namespace

void check_kv_fits(const RunMemory& m, int64_t num_blocks, int64_t bytes_per_block,
                   int64_t scale_bytes) {
  const std::optional<uint64_t> avail = m.available_bytes();
  const uint64_t bytes = uint64_t(num_blocks) * uint64_t(bytes_per_block) + uint64_t(scale_bytes);
  if (!avail || bytes <= *avail / 10 * 9) return;
  throw OutOfMemory(fmt::format(
      "KV cache of {} bytes ({} blocks of {} bytes) does not fit the {} memory available now: "
      "{} bytes ({}), of which it may take nine tenths; lower --memory, --requests, "
      "--prompt-len or --block-size",
      bytes, num_blocks, bytes_per_block, m.is_host() ? "host" : "device", *avail,
      m.is_host() ? "MemAvailable" : "cudaMemGetInfo"));
}

std::unique_ptr<RunMemory> make_host_memory() { return std::make_unique<HostMemory>(); }

std::unique_ptr<RunMemory> make_cuda_memory() {
#ifdef ATTNKIT_WITH_CUDA
  return std::make_unique<CudaMemory>();
#else
  throw Unsupported("this build has no CUDA support: configure with the 'cuda' preset");
#endif
}

}  // namespace attnkit
