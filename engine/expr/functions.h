// The functions expressions may call (internal to the expression engine):
// CEL's size, string tests, matches and conversions; CEL's strings extension
// (split, substring, indexOf, lastIndexOf, lowerAscii, upperAscii, replace,
// trim, join); and ruleplane's cronNext, backups and parseBackupName.
//
// A function may have several overloads that differ in their number of
// arguments (s.split(sep), s.split(sep, n)). Check picks the overload and
// validates constant arguments; evaluation only calls it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/common/value.h"
#include "engine/expr/expression.h"
#include "engine/expr/program_node.h"

namespace ruleplane::expr {

inline constexpr int kMaxArguments = 4;  // the receiver included

// What an argument must be. kAny leaves the check to the function.
enum class ArgumentKind : uint8_t { kAny, kString, kInt, kList, kTimestamp };

struct FunctionSignature {
  std::string_view name;
  Builtin builtin;
  int arguments;        // the receiver included
  bool global_style;    // size(x)
  bool receiver_style;  // x.size()
  std::array<ArgumentKind, kMaxArguments> kinds = {};
};

// Every overload of `name`, each with a different number of arguments; empty
// when there is no such function. All overloads of a name share their style.
std::span<const FunctionSignature> FindOverloads(std::string_view name);

// A constant argument that can never work: which one (0 is the receiver or
// the first argument) and why.
struct ArgumentError {
  int argument = 0;
  std::string message;
};

// Check time, once `call`'s children are built (constant ones folded):
// rejects constant arguments of the wrong kind or value, and keeps in `call`
// what evaluation can reuse (matches()'s compiled pattern, cronNext()'s
// parsed schedule).
std::optional<ArgumentError> PrepareCall(Node& call, const Limits& limits);

// Calls `call.function` with its evaluated arguments (the receiver first). An
// error argument propagates; an argument of the wrong kind is "no matching
// overload". Regular-expression steps count against `budget`, and a string
// that would not fit in what is left of it is not built (the caller charges
// what the result's size cost).
Value CallFunction(const Node& call, std::span<const Value* const> arguments, const Limits& limits,
                   Budget& budget);

}  // namespace ruleplane::expr
