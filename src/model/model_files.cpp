// Finding config files: paths, Hugging Face snapshot folders and bundled short names.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attnkit/error.hpp"
#include "attnkit/model.hpp"
#include "core/strings.hpp"

namespace attnkit {

namespace fs = std::filesystem;

namespace {

// The bundled folder is recognised by its SOURCES.md, so an unrelated "models" folder next to
// the executable or the working directory is not taken for it.
bool is_bundled_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "SOURCES.md", ec);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InvalidArgument(fmt::format("{}: cannot open the file for reading", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InvalidArgument(fmt::format("{}: reading the file failed", path.string()));
  return text.str();
}

ModelSpec load_file(const fs::path& path, const ModelLoadOptions& options) {
  return parse_model_config(read_text(path), path.string(), options);
}

}  // namespace

// $ATTNKIT_MODELS_DIR wins. Otherwise the library, which has no compile-time path to the source
// tree, searches upwards (up to 6 levels) from $ATTNKIT_SOURCE_DIR (set by ctest), from the
// running executable (/proc/self/exe: build/<dir>/tools/attnkit/attnkit -> ../../../../models)
// and from the current directory, for models/ or share/attnkit/models/ holding SOURCES.md.
// Empty when none is found.
std::string models_dir() {
  if (const char* env = std::getenv("ATTNKIT_MODELS_DIR"); env && *env) return env;
  std::vector<fs::path> starts;
  if (const char* src = std::getenv("ATTNKIT_SOURCE_DIR"); src && *src) starts.emplace_back(src);
  std::error_code ec;
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec && exe.has_parent_path()) {
    starts.push_back(exe.parent_path());
  }
  if (fs::path cwd = fs::current_path(ec); !ec) starts.push_back(cwd);
  for (fs::path dir : starts) {
    for (int level = 0; level <= 6 && !dir.empty(); ++level) {
      for (const fs::path& candidate : {dir / "models", dir / "share" / "attnkit" / "models"}) {
        if (is_bundled_dir(candidate)) return fs::weakly_canonical(candidate, ec).string();
      }
      if (!dir.has_parent_path() || dir.parent_path() == dir) break;
      dir = dir.parent_path();
    }
  }
  return {};
}

std::vector<std::string> bundled_model_names() {
  std::vector<std::string> names;
  const std::string dir = models_dir();
  if (dir.empty()) return names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

ModelSpec load_model(std::string_view name_or_path, const ModelLoadOptions& options) {
  const std::string arg(name_or_path);
  if (arg.empty()) throw InvalidArgument("model name or path is empty");
  const fs::path path(arg);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    // A Hugging Face snapshot folder.
    const fs::path config = path / "config.json";
    if (!fs::is_regular_file(config, ec)) {
      throw InvalidArgument(fmt::format("{}: the folder has no config.json", arg));
    }
    return load_file(config, options);
  }
  if (fs::is_regular_file(path, ec)) return load_file(path, options);

  const bool looks_like_path = arg.find('/') != std::string::npos ||
                               arg.find('\\') != std::string::npos || path.extension() == ".json";
  if (looks_like_path) throw InvalidArgument(fmt::format("{}: no such file", arg));

  const std::string dir = models_dir();
  if (dir.empty()) {
    throw InvalidArgument(
        fmt::format("model '{}' is not a file, and no bundled models folder was found (set "
                    "ATTNKIT_MODELS_DIR to the folder holding <name>.json files)",
                    arg));
  }
  const std::vector<std::string> names = bundled_model_names();
  auto it = std::find(names.begin(), names.end(), arg);
  if (it == names.end()) {
    it = std::find_if(names.begin(), names.end(),
                      [&](const std::string& n) { return iequals(n, arg); });
  }
  if (it == names.end()) {
    throw InvalidArgument(fmt::format(
        "model '{}' is neither a config file nor a bundled model; bundled models (in {}): {}", arg,
        dir, names.empty() ? std::string("none") : join(names)));
  }
  ModelSpec spec = load_file(fs::path(dir) / (*it + ".json"), options);
  spec.name = *it;
  return spec;
}

}  // namespace attnkit
