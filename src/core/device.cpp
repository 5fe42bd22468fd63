#include "attnkit/device.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include "attnkit/error.hpp"
#include "core/strings.hpp"

#ifdef ATTNKIT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace attnkit {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

DeviceInfo gpu_preset(std::string_view preset, std::string name, Platform p, int major, int minor,
                      std::string arch, int sms, uint64_t mem) {
  DeviceInfo d;
  d.platform = p;
  d.name = std::move(name);
  d.cc = {major, minor};
  d.arch = std::move(arch);
  d.sm_count = sms;
  d.memory_bytes = mem;
  d.preset = std::string(preset);
  return d;
}

// A CPU for planning without it (plans on `cpu` follow this machine's CPU, whose features decide
// some backends, e.g. vLLM's AMX_MLA).
DeviceInfo cpu_preset(std::string_view preset, std::string name, std::string isa, bool amx,
                      int cores, uint64_t mem) {
  DeviceInfo d;
  d.platform = Platform::kCpu;
  d.name = std::move(name);
  d.arch = "x86_64";
  d.cpu_isa = std::move(isa);
  d.has_amx = amx;
  d.cpu_cores = cores;
  d.memory_bytes = mem;
  d.preset = std::string(preset);
  return d;
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(' '));
        return v;
      }
    }
  }
  return {};
}

DeviceInfo detect_cpu() {
  DeviceInfo d;
  d.platform = Platform::kCpu;
  d.detected = true;
#if defined(__x86_64__)
  d.arch = "x86_64";
#elif defined(__aarch64__)
  d.arch = "aarch64";
#endif
  cpu_set_t set;
  CPU_ZERO(&set);
  d.cpu_cores = sched_getaffinity(0, sizeof(set), &set) == 0
                    ? CPU_COUNT(&set)
                    : int(std::thread::hardware_concurrency());
  const std::string flags = " " + cpuinfo_field("flags") + " ";
  auto has = [&](const char* f) {
    return flags.find(std::string(" ") + f + " ") != std::string::npos;
  };
  if (has("avx512_bf16") && has("avx512bw")) {
    d.cpu_isa = "avx512_bf16";
  } else if (has("avx512f") && has("avx512bw")) {
    d.cpu_isa = "avx512";
  } else if (has("avx2") && has("fma")) {
    d.cpu_isa = "avx2";
  } else {
    d.cpu_isa = "scalar";
  }
  d.has_amx = has("amx_tile") && has("amx_bf16");
  const std::string model = cpuinfo_field("model name");
  d.name = "cpu: " + (model.empty() ? d.arch : model);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) d.memory_bytes = uint64_t(pages) * uint64_t(page);
  return d;
}

#ifdef ATTNKIT_WITH_CUDA
bool detect_cuda(DeviceInfo& d) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return false;
  d = DeviceInfo{};
  d.platform = Platform::kCuda;
  d.name = prop.name;
  d.cc = {prop.major, prop.minor};
  d.arch = fmt::format("sm_{}{}", prop.major, prop.minor);
  d.sm_count = prop.multiProcessorCount;
  d.memory_bytes = prop.totalGlobalMem;
  d.detected = true;
  return true;
}
#endif

}  // namespace

DeviceInfo detect_device() {
#ifdef ATTNKIT_WITH_CUDA
  DeviceInfo gpu;
  if (detect_cuda(gpu)) return gpu;
#endif
  return detect_cpu();
}

std::vector<std::string> device_preset_names() {
  return {"cpu",  "cpu-amx", "cpu-avx512", "a100",    "l40s",   "h100",
          "h200", "b200",    "b300",       "rtx5090", "mi300x", "xpu"};
}

DeviceInfo device_from_name(std::string_view name) {
  const std::string n = to_lower(name);
  if (n == "auto") return detect_device();
  if (n == "cpu") {
    DeviceInfo d = detect_cpu();
    d.detected = false;
    d.preset = "cpu";
    return d;
  }
  if (n == "cuda") {
    DeviceInfo d = detect_device();
    if (d.platform != Platform::kCuda) {
      throw InvalidArgument(
          "device 'cuda' requested but no CUDA GPU was found (this build "
#ifdef ATTNKIT_WITH_CUDA
          "has CUDA support"
#else
          "has no CUDA support: configure with the 'cuda' preset"
#endif
          "); use a preset such as h100 to plan without one");
    }
    return d;
  }
  if (n == "cpu-amx")
    return cpu_preset(n, "x86-64 server CPU with AMX (preset)", "avx512_bf16", true, 56,
                      512 * kGiB);
  if (n == "cpu-avx512")
    return cpu_preset(n, "x86-64 server CPU with AVX-512, no AMX (preset)", "avx512_bf16", false,
                      64, 512 * kGiB);
  if (n == "a100")
    return gpu_preset(n, "NVIDIA A100 (preset)", Platform::kCuda, 8, 0, "sm_80", 108, 80 * kGiB);
  if (n == "l40s")
    return gpu_preset(n, "NVIDIA L40S (preset)", Platform::kCuda, 8, 9, "sm_89", 142, 48 * kGiB);
  if (n == "h100")
    return gpu_preset(n, "NVIDIA H100 SXM (preset)", Platform::kCuda, 9, 0, "sm_90", 132,
                      80 * kGiB);
  if (n == "h200")
    return gpu_preset(n, "NVIDIA H200 (preset)", Platform::kCuda, 9, 0, "sm_90", 132, 141 * kGiB);
  if (n == "b200")
    return gpu_preset(n, "NVIDIA B200 (preset)", Platform::kCuda, 10, 0, "sm_100", 148, 180 * kGiB);
  if (n == "b300")
    return gpu_preset(n, "NVIDIA B300 (preset)", Platform::kCuda, 10, 3, "sm_103", 148, 270 * kGiB);
  if (n == "rtx5090")
    return gpu_preset(n, "NVIDIA GeForce RTX 5090 (preset)", Platform::kCuda, 12, 0, "sm_120", 170,
                      32 * kGiB);
  if (n == "mi300x")
    return gpu_preset(n, "AMD Instinct MI300X (preset)", Platform::kRocm, 9, 4, "gfx942", 304,
                      192 * kGiB);
  if (n == "xpu")
    return gpu_preset(n, "Intel Data Center GPU Max 1550 (preset)", Platform::kXpu, 0, 0, "pvc",
                      128, 128 * kGiB);
  throw InvalidArgument(fmt::format("device '{}' is unknown; expected auto, cuda or a preset: {}",
                                    name, join(device_preset_names())));
}

std::string describe(const DeviceInfo& d) {
  std::string s = d.name;
  if (d.platform == Platform::kCuda || d.platform == Platform::kRocm)
    s += fmt::format(", {} cc {}.{} ({}), {} SMs", to_string(d.platform), d.cc.major, d.cc.minor,
                     d.arch, d.sm_count);
  else if (d.platform == Platform::kCpu)
    s += fmt::format(", {} cores, {}{}", d.cpu_cores, d.cpu_isa, d.has_amx ? "+amx" : "");
  else
    s += fmt::format(", {}", to_string(d.platform));
  if (d.memory_bytes) s += fmt::format(", {:.1f} GiB", double(d.memory_bytes) / double(kGiB));
  // The "cpu" preset's figures are this machine's CPU, detected.
  s += d.detected || d.preset == "cpu" ? " [detected]" : " [preset]";
  return s;
}

uint64_t parse_memory_size(std::string_view s) {
  std::string t;
  for (char c : s)
    if (c != ' ') t += c;
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  const std::string num = t.substr(0, i), unit = to_lower(t.substr(i));
  double v = 0;
  try {
    size_t used = 0;
    v = std::stod(num, &used);
    if (used != num.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InvalidArgument(fmt::format(
        "memory size '{}' is not a number with a unit; expected e.g. 80GiB, 512MiB, 40GB", s));
  }
  double mult = 0;
  if (unit.empty() || unit == "b")
    mult = 1;
  else if (unit == "kib" || unit == "k")
    mult = 1024.0;
  else if (unit == "mib" || unit == "m")
    mult = 1024.0 * 1024;
  else if (unit == "gib" || unit == "g")
    mult = double(kGiB);
  else if (unit == "tib" || unit == "t")
    mult = double(kGiB) * 1024;
  else if (unit == "kb")
    mult = 1e3;
  else if (unit == "mb")
    mult = 1e6;
  else if (unit == "gb")
    mult = 1e9;
  else if (unit == "tb")
    mult = 1e12;
  if (mult == 0 || v < 0)
    throw InvalidArgument(fmt::format(
        "memory size '{}' has unit '{}'; expected B, KiB, MiB, GiB, TiB, KB, MB, GB or TB", s,
        unit));
  const double bytes = v * mult;
  if (!(bytes >= 1.0) || bytes >= 9.2e18)
    throw InvalidArgument(fmt::format(
        "memory size '{}' is {} bytes; expected at least 1 byte and less than 2^63", s, bytes));
  return uint64_t(std::llround(bytes));
}

}  // namespace attnkit
