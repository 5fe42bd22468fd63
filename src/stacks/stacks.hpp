// The catalogs of backends, one per stack. The registry (registry.cpp) is the one place that
// lists them.
#pragma once

#include "attnkit/selector.hpp"

namespace attnkit {

const Catalog& native_catalog();  // what attnkit executes (src/stacks/native)
const Catalog& vllm_catalog();    // vLLM's attention layer, for what-if planning (src/stacks/vllm)

}  // namespace attnkit
