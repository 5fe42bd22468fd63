// The backends under conformance test: the one list. Each entry names its capability
// declaration (the cells are generated from it), a factory, and where its memory lives.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "attnkit/attention.hpp"
#include "attnkit/device.hpp"
#include "backends/cpu_reference/capabilities.hpp"
#include "backends/cpu_reference/cpu_reference_backend.hpp"
#include "backends/cuda_flash/capabilities.hpp"
#include "backends/cuda_flash/cuda_flash_backend.hpp"
#include "backends/cuda_mla/capabilities.hpp"
#include "backends/cuda_mla/cuda_mla_backend.hpp"
#include "harness.hpp"
#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
#include "cuda_memory.hpp"
#endif
#include "backends/cpu_flash/capabilities.hpp"
#include "backends/cpu_flash/cpu_flash_backend.hpp"

namespace attnkit::conformance {

struct BackendEntry {
  std::string name;
  std::function<const Capabilities&()> capabilities;
  std::function<std::unique_ptr<AttentionBackend>()> factory;
  bool requires_gpu = false;
  // GPU entries: whether a usable device is present (else the kernel tests skip cleanly) and the
  // memory space holding the backend's pointers. Null memory means host memory.
  std::function<bool()> gpu_available;
  std::function<std::unique_ptr<MemorySpace>()> memory;
  // Multiplies the documented tolerances (harness.hpp); 1 unless a backend justifies more.
  double tolerance_factor = 1.0;
  // CPU_REFERENCE is the oracle of the others; it is checked against the independent naive fp64
  // derivation in harness.hpp instead, with fp64 agreement tolerances.
  bool check_against_naive = false;
  // The randomized test (fuzz_test.cpp) builds the backend through this where set: an
  // implementation choice drawn from `pick` (e.g. CPU_FLASH's ISA variant and thread count),
  // described in `*what` for the failure report.
  std::function<std::unique_ptr<AttentionBackend>(uint64_t pick, std::string* what)> variant;

  bool runnable() const { return !requires_gpu || (gpu_available && gpu_available()); }
  std::unique_ptr<MemorySpace> make_memory() const {
    return memory ? memory() : std::make_unique<HostMemory>();
  }
  // The device its declaration is checked on: this CPU, the present GPU, or an H100 preset.
  DeviceInfo device() const {
    if (!requires_gpu) return device_from_name("cpu");
    return runnable() ? detect_device() : device_from_name("h100");
  }
};

// The randomized test's choices among a CUDA backend's plan options: the split count (the
// heuristic's, or forced), one count for every sequence, decodes as a part of their own whatever
// their bytes, parts in turn instead of concurrently.
inline void cuda_variant(uint64_t pick, CudaFlashOptions& opt, std::string* what) {
  static const int kSplits[] = {0, 0, 0, 1, 2, 3, 7};
  opt.force_num_splits = kSplits[pick % 7];
  pick /= 7;
  opt.uniform_splits = pick % 2 == 1;
  pick /= 2;
  if (pick % 2) opt.part_min_decode_bytes = 0;
  pick /= 2;
  opt.concurrent_parts = pick % 2 == 0;
  *what = (opt.force_num_splits ? std::to_string(opt.force_num_splits) + " splits forced"
                                : std::string("planned splits")) +
          (opt.uniform_splits ? ", uniform" : "") +
          (opt.part_min_decode_bytes == 0 ? ", decodes as a part" : "") +
          (opt.concurrent_parts ? "" : ", parts in turn");
}

// gtest prints parameters through this (instead of their bytes).
inline void PrintTo(const BackendEntry& e, std::ostream* os) { *os << e.name; }

inline const std::vector<BackendEntry>& backends_under_test() {
  static const std::vector<BackendEntry> entries = [] {
    std::vector<BackendEntry> v;
    {
      BackendEntry e;
      e.name = "CPU_REFERENCE";
      e.capabilities = []() -> const Capabilities& { return cpu_reference_capabilities(); };
      e.factory = [] { return make_cpu_reference_backend(); };
      e.check_against_naive = true;
      v.push_back(std::move(e));
    }
    {
      BackendEntry e;
      e.name = "CPU_FLASH";
      e.capabilities = []() -> const Capabilities& { return cpu_flash_capabilities(); };
      e.factory = [] { return make_cpu_flash_backend(); };
      e.variant = [](uint64_t pick, std::string* what) {
        const std::vector<cpu_flash::Isa> isas = cpu_flash::supported_isas();
        CpuFlashOptions o;
        o.isa = isas[pick % isas.size()];
        pick /= isas.size();
        o.num_threads = 1 + int(pick % 4);
        pick /= 4;
        if (*o.isa >= cpu_flash::Isa::kAvx512Bf16 && pick % 3 != 2) o.bf16_dots = pick % 3 == 1;
        pick /= 3;
        if (pick % 3 != 2) o.lockstep_heads = pick % 3 == 1;
        *what = std::string(cpu_flash::to_string(*o.isa)) + ", " + std::to_string(o.num_threads) +
                " threads" + (o.bf16_dots ? *o.bf16_dots ? ", vdpbf16ps" : ", fp32 products" : "") +
                (o.lockstep_heads ? *o.lockstep_heads ? ", lockstep" : ", one head an item" : "");
        return make_cpu_flash_backend(o);
      };
      v.push_back(std::move(e));
    }
    // GPU backends are always listed: their declarations are checked (undeclared cells refused)
    // on any machine; their kernels run only in CUDA builds with a GPU present.
    // CUDA_FLASH runs the device's newest generation: v3 on SM90, whose Hopper form then takes
    // every prefill cell at heads 64 to 256 and 192/128 (the plan's head-64 length rule only
    // chooses between that form and v2's); CUDA_FLASH_v2 runs the same cells on v2's forms.
    for (int generation : {0, 2}) {
      BackendEntry e;
      e.name = generation ? "CUDA_FLASH_v2" : "CUDA_FLASH";
      e.capabilities = []() -> const Capabilities& { return cuda_flash_capabilities(); };
      e.factory = [generation] {
        CudaFlashOptions opt;
        opt.generation = generation;
        opt.hopper_any_length = generation == 0;
        return make_cuda_flash_backend(opt);
      };
      e.variant = [generation](uint64_t pick, std::string* what) {
        CudaFlashOptions opt;
        opt.generation = generation;
        opt.hopper_any_length = generation == 0;
        cuda_variant(pick, opt, what);
        return make_cuda_flash_backend(opt);
      };
      e.requires_gpu = true;
#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
      e.gpu_available = cuda_gpu_present;
      e.memory = [] { return std::unique_ptr<MemorySpace>(std::make_unique<CudaMemory>()); };
#endif
      v.push_back(std::move(e));
    }
    {
      BackendEntry e;
      e.name = "CUDA_MLA";
      e.capabilities = []() -> const Capabilities& { return cuda_mla_capabilities(); };
      e.factory = [] { return make_cuda_mla_backend(); };
      e.variant = [](uint64_t pick, std::string* what) {
        CudaFlashOptions opt;
        opt.mla_form = int(pick % 2);  // 0: by device and shape; 1: the wide form
        cuda_variant(pick / 2, opt, what);
        *what += opt.mla_form ? ", wide form" : "";
        return make_cuda_mla_backend(opt);
      };
      e.requires_gpu = true;
#if defined(ATTNKIT_CUDA_FLASH_KERNELS)
      e.gpu_available = cuda_gpu_present;
      e.memory = [] { return std::unique_ptr<MemorySpace>(std::make_unique<CudaMemory>()); };
#endif
      v.push_back(std::move(e));
    }
    return v;
  }();
  return entries;
}

}  // namespace attnkit::conformance
