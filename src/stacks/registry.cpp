#include <fmt/format.h>

#include "attnkit/error.hpp"
#include "core/strings.hpp"
#include "stacks/stacks.hpp"

namespace attnkit {

std::vector<std::string> stack_names() { return {"native", "vllm"}; }

const Catalog& catalog_for_stack(std::string_view stack) {
  if (iequals(stack, "native")) return native_catalog();
  if (iequals(stack, "vllm")) return vllm_catalog();
  throw InvalidArgument(
      fmt::format("stack '{}' is unknown; expected one of: {}", stack, join(stack_names())));
}

}  // namespace attnkit
