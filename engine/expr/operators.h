// CEL's operators on Values (internal to the expression engine): arithmetic
// with overflow checks, comparisons, membership. Error operands propagate
// (the left one first); a combination of kinds CEL does not define is the
// error "no matching overload for '+' applied to (int, double)".
#pragma once

#include <initializer_list>
#include <string_view>

#include "engine/common/value.h"
#include "engine/expr/ast.h"

namespace ruleplane::expr {

// "no matching overload for '<name>' applied to (<kinds>)".
Value NoMatchingOverload(std::string_view name, std::initializer_list<const Value*> arguments);

Value ApplyUnary(Operator op, const Value& operand);

// Every binary operator except && and ||, which the evaluator handles because
// they do not evaluate their operands strictly.
Value ApplyBinary(Operator op, const Value& left, const Value& right);

}  // namespace ruleplane::expr
