// The device attention runs on: detected, or a named preset for planning on absent hardware.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/types.hpp"

namespace attnkit {

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  int as_int() const { return major * 10 + minor; }  // 9.0 -> 90, 10.3 -> 103, 12.1 -> 121
  bool operator==(const ComputeCapability&) const = default;
};

struct DeviceInfo {
  Platform platform = Platform::kCpu;
  std::string name;      // "NVIDIA H200", "h100 (preset)", "cpu: Intel Xeon ..."
  ComputeCapability cc;  // GPUs only
  std::string arch;      // "sm_90", "gfx942", "x86_64" ...
  int sm_count = 0;      // GPUs: multiprocessors
  int cpu_cores = 0;     // CPU: hardware threads available to the process
  std::string cpu_isa;   // CPU: best SIMD level: "avx512_bf16", "avx512", "avx2", "scalar"
  bool has_amx = false;  // CPU: AMX tiles (vLLM's AMX_MLA)
  uint64_t memory_bytes = 0;
  bool detected = false;  // true when read off real hardware
  std::string preset;     // preset name when not detected
};

// The real device: a CUDA GPU when built with CUDA and one is present, else this CPU.
DeviceInfo detect_device();
// A named preset, one of device_preset_names() (case-insensitive); "auto" detects, "cuda" needs
// a CUDA GPU. Unknown names throw InvalidArgument listing the presets.
DeviceInfo device_from_name(std::string_view name);
// cpu, cpu-amx, cpu-avx512, a100, ... xpu: what --help and the unknown-device error list.
std::vector<std::string> device_preset_names();
std::string describe(const DeviceInfo& d);
// Parses "80GiB", "80GB", "512MiB", "1.5TiB", plain bytes. Throws InvalidArgument.
uint64_t parse_memory_size(std::string_view s);

}  // namespace attnkit
