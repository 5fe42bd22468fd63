// What the tests of offsets past 32 bits share (CPU and CUDA backends, KV storage): where their
// data sits, and host buffers of several GiB of which only a few blocks or rows are touched.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace attnkit::far_offsets {

// The first used cache block starts past this many bytes (K element offsets above 2^31).
inline constexpr int64_t kBaseBytes = int64_t(1) << 32;

// Token stride (elements) of query / output views that puts the last of `tokens` rows past 2^31
// elements; a multiple of 64.
inline int64_t token_stride(int tokens) {
  return ((int64_t(1) << 31) / std::max(1, tokens - 1) / 64 + 1) * 64;
}

// An anonymous mapping whose pages cost nothing until touched and read as zero; nullptr where the
// host refuses it (strict overcommit).
inline void* map_lazily(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
inline void unmap_lazily(void* p, size_t bytes) { munmap(p, bytes); }

}  // namespace attnkit::far_offsets
