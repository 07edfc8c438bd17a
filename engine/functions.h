// CEL's functions (internal to the expression engine): size, the string
// functions, matches, and the conversions int, double, string, timestamp and
// duration.
#pragma once

#include <span>
#include <string_view>

#include "engine/expression.h"
#include "engine/program_node.h"
#include "engine/regex.h"
#include "engine/value.h"

namespace ruleplane::expr {

struct FunctionSignature {
  std::string_view name;
  Builtin builtin;
  int arguments;        // the receiver included
  bool global_style;    // size(x)
  bool receiver_style;  // x.size()
};

// nullptr when there is no such function.
const FunctionSignature* FindFunction(std::string_view name);

// Calls `builtin` with its arguments (the receiver first). An error argument
// propagates. `constant_regex` is matches()'s pattern when Check compiled it.
Value CallFunction(Builtin builtin, std::span<const Value* const> arguments, const Regex* constant_regex,
                   const Limits& limits);

}  // namespace ruleplane::expr
