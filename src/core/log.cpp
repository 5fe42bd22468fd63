#include "attnkit/log.hpp"

#include <cstdio>
#include <mutex>
#include <set>
#include <string>

namespace attnkit {
namespace {

std::mutex& mu() {
  static std::mutex m;
  return m;
}

std::string_view level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarning:
      return "WARNING";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?";
}

void default_sink(LogLevel level, std::string_view message) {
  if (level < LogLevel::kInfo) return;
  std::fprintf(stderr, "[attnkit] %.*s: %.*s\n", int(level_name(level).size()),
               level_name(level).data(), int(message.size()), message.data());
}

LogSink& sink() {
  static LogSink s = default_sink;
  return s;
}

std::set<std::string>& seen_causes() {
  static std::set<std::string> s;
  return s;
}

}  // namespace

LogSink set_log_sink(LogSink s) {
  std::lock_guard lock(mu());
  LogSink prev = std::move(sink());
  sink() = s ? std::move(s) : LogSink(default_sink);
  return prev;
}

void log(LogLevel level, std::string_view message) {
  LogSink s;
  {
    std::lock_guard lock(mu());
    s = sink();
  }
  s(level, message);
}

bool warn_once(std::string_view cause, std::string_view message) {
  {
    std::lock_guard lock(mu());
    if (!seen_causes().emplace(cause).second) return false;
  }
  log(LogLevel::kWarning, message);
  return true;
}

void reset_warn_once() {
  std::lock_guard lock(mu());
  seen_causes().clear();
}

ScopedLogCapture::ScopedLogCapture() {
  previous_ = set_log_sink([this](LogLevel level, std::string_view message) {
    std::lock_guard lock(mu_);
    text_ += std::string(level_name(level)) + ": " + std::string(message) + "\n";
  });
}

ScopedLogCapture::~ScopedLogCapture() { set_log_sink(std::move(previous_)); }

}  // namespace attnkit
