// Device presets, describe() and memory-size parsing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attnkit/device.hpp"
#include "attnkit/error.hpp"

namespace attnkit {
namespace {

using ::testing::HasSubstr;

struct Preset {
  const char* name;
  Platform platform;
  int major, minor;
};

TEST(Device, EveryPresetOfTheIssue) {
  const Preset presets[] = {
      {"a100", Platform::kCuda, 8, 0},     {"l40s", Platform::kCuda, 8, 9},
      {"h100", Platform::kCuda, 9, 0},     {"h200", Platform::kCuda, 9, 0},
      {"b200", Platform::kCuda, 10, 0},    {"b300", Platform::kCuda, 10, 3},
      {"rtx5090", Platform::kCuda, 12, 0}, {"mi300x", Platform::kRocm, 9, 4},
  };
  for (const auto& p : presets) {
    const DeviceInfo d = device_from_name(p.name);
    EXPECT_EQ(d.platform, p.platform) << p.name;
    EXPECT_EQ(d.cc, (ComputeCapability{p.major, p.minor})) << p.name;
    EXPECT_EQ(d.preset, p.name);
    EXPECT_FALSE(d.detected);
    EXPECT_GT(d.sm_count, 0) << p.name;
    EXPECT_GT(d.memory_bytes, 0u) << p.name;
  }
  EXPECT_EQ(device_from_name("xpu").platform, Platform::kXpu);
  const DeviceInfo cpu = device_from_name("cpu");
  EXPECT_EQ(cpu.platform, Platform::kCpu);
  EXPECT_EQ(cpu.preset, "cpu");
  EXPECT_GT(cpu.cpu_cores, 0);
  EXPECT_FALSE(cpu.cpu_isa.empty());
  // The CPU presets describe a fixed CPU, whatever this machine's is.
  for (const auto& [n, amx] : {std::pair{"cpu-amx", true}, std::pair{"cpu-avx512", false}}) {
    const DeviceInfo d = device_from_name(n);
    EXPECT_EQ(d.platform, Platform::kCpu) << n;
    EXPECT_EQ(d.has_amx, amx) << n;
    EXPECT_EQ(d.arch, "x86_64") << n;
    EXPECT_FALSE(d.detected) << n;
    EXPECT_GT(d.cpu_cores, 0) << n;
  }
  EXPECT_EQ(device_from_name("H100").cc.as_int(), 90);
  EXPECT_EQ(device_from_name("b300").cc.as_int(), 103);
  const auto names = device_preset_names();
  for (const char* n : {"cpu", "cpu-amx", "cpu-avx512", "a100", "l40s", "h100", "h200", "b200",
                        "b300", "rtx5090", "mi300x", "xpu"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  for (const auto& n : names) EXPECT_NO_THROW(device_from_name(n)) << n;
}

TEST(Device, UnknownNameListsPresets) {
  try {
    device_from_name("h300");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("'h300'"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("h100"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("mi300x"));
  }
}

TEST(Device, AutoDetectsSomething) {
  const DeviceInfo d = device_from_name("auto");
  EXPECT_TRUE(d.detected);
  EXPECT_FALSE(d.name.empty());
}

TEST(Device, Describe) {
  const std::string s = describe(device_from_name("h100"));
  EXPECT_THAT(s, HasSubstr("cc 9.0"));
  EXPECT_THAT(s, HasSubstr("sm_90"));
  EXPECT_THAT(s, HasSubstr("[preset]"));
  EXPECT_THAT(describe(device_from_name("cpu")), HasSubstr("[detected]"));  // this machine's CPU
  EXPECT_THAT(describe(device_from_name("cpu-amx")), HasSubstr("[preset]"));
  EXPECT_EQ(ComputeCapability({12, 1}).as_int(), 121);
}

TEST(MemorySize, Units) {
  EXPECT_EQ(parse_memory_size("80GiB"), 80ull << 30);
  EXPECT_EQ(parse_memory_size("80GB"), 80'000'000'000ull);
  EXPECT_EQ(parse_memory_size("512MiB"), 512ull << 20);
  EXPECT_EQ(parse_memory_size("1.5TiB"), 3ull << 39);
  EXPECT_EQ(parse_memory_size("4096"), 4096u);
  EXPECT_EQ(parse_memory_size("4096B"), 4096u);
  EXPECT_EQ(parse_memory_size("2 gib"), 2ull << 30);
  EXPECT_EQ(parse_memory_size("16KiB"), 16384u);
  EXPECT_EQ(parse_memory_size("1kb"), 1000u);
}

TEST(MemorySize, RejectsGarbage) {
  for (const char* bad : {"", "GiB", "abc", "10XB", "-1GiB", "1.2.3GB", "12 parsecs"}) {
    EXPECT_THROW(parse_memory_size(bad), InvalidArgument) << bad;
  }
  try {
    parse_memory_size("10XB");
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("GiB"));
  }
}

}  // namespace
}  // namespace attnkit
