// The CUDA memory space for the conformance harness: device buffers from cudaMalloc, copies on
// one stream that is also the stream run()/write_kv() receive. Only in CUDA builds.
#pragma once

#if defined(ATTNKIT_WITH_CUDA)

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "harness.hpp"

namespace attnkit::conformance {

inline bool cuda_gpu_present() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  return n > 0;
}

class CudaMemory final : public MemorySpace {
 public:
  CudaMemory() { check(cudaStreamCreate(&stream_), "cudaStreamCreate"); }
  ~CudaMemory() override { cudaStreamDestroy(stream_); }
  std::string name() const override { return "cuda"; }
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    return p;
  }
  void release(void* p) override { cudaFree(p); }
  void copy_to_device(void* dst, const void* src, size_t n) override {
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync H2D");
    synchronize();  // the host source may go away right after
  }
  void copy_to_host(void* dst, const void* src, size_t n) override {
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync D2H");
    synchronize();
  }
  void* stream() override { return stream_; }
  void synchronize() override {
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    check(cudaGetLastError(), "kernel launch");
  }

 private:
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
      throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
  }
  cudaStream_t stream_ = nullptr;
};

}  // namespace attnkit::conformance

#endif  // ATTNKIT_WITH_CUDA
