// Logging through a replaceable sink, with warn-once per cause.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace attnkit {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

using LogSink = std::function<void(LogLevel, std::string_view message)>;

// Replaces the process-wide sink (default: kInfo and above to stderr as "[attnkit] LEVEL: msg").
// Returns the previous sink. Thread-safe.
LogSink set_log_sink(LogSink sink);
void log(LogLevel level, std::string_view message);
// Logs `message` at kWarning the first time `cause` is seen in this process (or since
// reset_warn_once), and returns whether it was logged.
bool warn_once(std::string_view cause, std::string_view message);
void reset_warn_once();

// Captures every message while alive and restores the previous sink afterwards (tests, CLI).
class ScopedLogCapture {
 public:
  ScopedLogCapture();
  ~ScopedLogCapture();
  ScopedLogCapture(const ScopedLogCapture&) = delete;
  ScopedLogCapture& operator=(const ScopedLogCapture&) = delete;
  std::string text() const {
    std::lock_guard lock(mu_);
    return text_;
  }

 private:
  LogSink previous_;
  mutable std::mutex mu_;  // threads may log while captured
  std::string text_;
};

}  // namespace attnkit
