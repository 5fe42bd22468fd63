// Exceptions thrown by the library. Messages name the rule, the value given and what was expected.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnkit {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input at an API boundary (malformed config, bad shape, unknown name).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A valid request that nothing can run: no valid backend, an invalid explicit choice, a kernel
// configuration that is not built. `reasons` maps a backend name to why it was refused.
class Unsupported : public Error {
 public:
  Unsupported(const std::string& what, std::map<std::string, std::vector<std::string>> reasons = {})
      : Error(what), reasons_(std::move(reasons)) {}
  const std::map<std::string, std::vector<std::string>>& reasons() const { return reasons_; }

 private:
  std::map<std::string, std::vector<std::string>> reasons_;
};

// A memory budget or pool capacity that cannot hold the request.
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

}  // namespace attnkit
