// CPU_REFERENCE: the fp64 oracle. A literal implementation of docs/semantics.md: gathers each
// sequence's keys through its block table, dequantizes in fp64, computes one row at a time.
// Slow on purpose; every other backend is checked against it.
#pragma once

#include <memory>

#include "attnkit/attention.hpp"

namespace attnkit {

std::unique_ptr<AttentionBackend> make_cpu_reference_backend();

// The checks run() performs before touching memory (docs/semantics.md §6); host pointers only.
// Throws InvalidArgument naming the rule, the value given and the value expected.
void validate_reference_args(const AttentionArgs& args);
void validate_reference_write_args(const KvWriteArgs& args);

}  // namespace attnkit
