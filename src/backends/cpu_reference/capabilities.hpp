// CPU_REFERENCE: the fp64-accumulating oracle. It runs every feature at any head size.
#pragma once

#include "attnkit/capability.hpp"

namespace attnkit {
const Capabilities& cpu_reference_capabilities();
}  // namespace attnkit
