// CPU_REFERENCE: the fp64 oracle. A literal implementation of docs/semantics.md: gathers each
// sequence's keys through its block table, dequantizes in fp64, computes one row at a time.
// Slow on purpose; every other backend is checked against it.
#pragma once

#include <memory>

#include "attnkit/attention.hpp"

namespace attnkit {

// run() and write_kv() check their arguments first (backends/common/validate.hpp, shared with
// CPU_FLASH): nothing is written when a call is rejected.
std::unique_ptr<AttentionBackend> make_cpu_reference_backend();

}  // namespace attnkit
