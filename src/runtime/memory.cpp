#include "runtime/memory.hpp"

#include <fmt/format.h>

#include <cstring>

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

std::unique_ptr<RunMemory> make_host_memory() { return std::make_unique<HostMemory>(); }

std::unique_ptr<RunMemory> make_cuda_memory() {
#ifdef ATTNKIT_WITH_CUDA
  return std::make_unique<CudaMemory>();
#else
  throw Unsupported("this build has no CUDA support: configure with the 'cuda' preset");
#endif
}

}  // namespace attnkit
