#include "engine/expr/operators.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "engine/common/time_util.h"

namespace ruleplane::expr {
namespace {

bool IsNumber(const Value& v) { return v.is_int() || v.is_double(); }

Value IntegerOverflow() { return Value::Error("integer overflow"); }

Value FromResult(const Result<Timestamp>& timestamp) {
  return timestamp.ok() ? Value::MakeTimestamp(*timestamp) : Value::Error(timestamp.error().message);
}

Value FromResult(const Result<Duration>& duration) {
  return duration.ok() ? Value::MakeDuration(*duration) : Value::Error(duration.error().message);
}

Value AddValues(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.kind() == Kind::kInt && b.kind() == Kind::kInt) {
    int64_t out;
    if (__builtin_add_overflow(a.int_value(), b.int_value(), &out)) return IntegerOverflow();
    return Value::Int(out);
  }
  if (a.kind() == Kind::kDouble && b.kind() == Kind::kDouble)
    return Value::Double(a.double_value() + b.double_value());
  if (a.kind() == Kind::kString && b.kind() == Kind::kString)
    return Value::String(a.string_value() + b.string_value());
  if (a.kind() == Kind::kList && b.kind() == Kind::kList) {
    if (b.list_value().empty()) return a;
    if (a.list_value().empty()) return b;
    Value::List items = a.list_value();
    items.insert(items.end(), b.list_value().begin(), b.list_value().end());
    return Value::MakeList(std::move(items));
  }
  int64_t out;
  if (a.kind() == Kind::kDuration && b.kind() == Kind::kDuration) {
    if (__builtin_add_overflow(a.duration_value().nanos, b.duration_value().nanos, &out)) {
      return Value::Error("duration overflow");
    }
    return Value::MakeDuration(Duration{out});
  }
  if ((a.kind() == Kind::kTimestamp && b.kind() == Kind::kDuration) ||
      (a.kind() == Kind::kDuration && b.kind() == Kind::kTimestamp)) {
    const Value& t = a.kind() == Kind::kTimestamp ? a : b;
    const Value& d = a.kind() == Kind::kDuration ? a : b;
    return FromResult(AddDuration(t.timestamp_value(), d.duration_value()));
  }
  return NoMatchingOverload("+", {&a, &b});
}

Value SubtractValues(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  int64_t out;
  if (a.kind() == Kind::kInt && b.kind() == Kind::kInt) {
    if (__builtin_sub_overflow(a.int_value(), b.int_value(), &out)) return IntegerOverflow();
    return Value::Int(out);
  }
  if (a.kind() == Kind::kDouble && b.kind() == Kind::kDouble)
    return Value::Double(a.double_value() - b.double_value());
  if (a.kind() == Kind::kTimestamp && b.kind() == Kind::kTimestamp) {
    return FromResult(TimeBetween(a.timestamp_value(), b.timestamp_value()));
  }
  if (a.kind() == Kind::kTimestamp && b.kind() == Kind::kDuration) {
    return FromResult(SubtractDuration(a.timestamp_value(), b.duration_value()));
  }
  if (a.kind() == Kind::kDuration && b.kind() == Kind::kDuration) {
    if (__builtin_sub_overflow(a.duration_value().nanos, b.duration_value().nanos, &out)) {
      return Value::Error("duration overflow");
    }
    return Value::MakeDuration(Duration{out});
  }
  return NoMatchingOverload("-", {&a, &b});
}

Value MultiplyValues(const Value& a, const Value& b) {
  if (a.is_int() && b.is_int()) {
    int64_t out;
    if (__builtin_mul_overflow(a.int_value(), b.int_value(), &out)) return IntegerOverflow();
    return Value::Int(out);
  }
  if (a.is_double() && b.is_double()) return Value::Double(a.double_value() * b.double_value());
  return NoMatchingOverload("*", {&a, &b});
}

Value DivideValues(const Value& a, const Value& b) {
  if (a.is_int() && b.is_int()) {
    if (b.int_value() == 0) return Value::Error("division by zero");
    if (a.int_value() == std::numeric_limits<int64_t>::min() && b.int_value() == -1) return IntegerOverflow();
    return Value::Int(a.int_value() / b.int_value());  // C++ truncates toward zero, as CEL does
  }
  // As in CEL, double division by zero gives an infinity (or NaN), not an error.
  if (a.is_double() && b.is_double()) return Value::Double(a.double_value() / b.double_value());
  return NoMatchingOverload("/", {&a, &b});
}

Value ModuloValues(const Value& a, const Value& b) {
  if (a.is_int() && b.is_int()) {
    if (b.int_value() == 0) return Value::Error("modulus by zero");
    if (a.int_value() == std::numeric_limits<int64_t>::min() && b.int_value() == -1) return IntegerOverflow();
    return Value::Int(a.int_value() % b.int_value());
  }
  return NoMatchingOverload("%", {&a, &b});
}

// OrderValues: -1, 0 or 1 for ordered operands, kUnordered when one is NaN,
// kNotComparable when CEL defines no ordering between the two kinds.
constexpr int kUnordered = 2;
constexpr int kNotComparable = 3;

int OrderValues(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (IsNumber(a) && IsNumber(b)) {
    if ((a.is_double() && std::isnan(a.double_value())) || (b.is_double() && std::isnan(b.double_value()))) {
      return kUnordered;
    }
    return Value::Compare(a, b);
  }
  if (a.kind() != b.kind()) return kNotComparable;
  switch (a.kind()) {
    case Kind::kBool:
    case Kind::kString:
    case Kind::kTimestamp:
    case Kind::kDuration:
      return Value::Compare(a, b);
    default:
      return kNotComparable;
  }
}

Value CompareValues(Operator op, const Value& a, const Value& b) {
  const int order = OrderValues(a, b);
  if (order == kNotComparable) return NoMatchingOverload(OperatorText(op), {&a, &b});
  if (order == kUnordered) return Value::Bool(false);
  switch (op) {
    case Operator::kLess:
      return Value::Bool(order < 0);
    case Operator::kLessEqual:
      return Value::Bool(order <= 0);
    case Operator::kGreater:
      return Value::Bool(order > 0);
    default:
      return Value::Bool(order >= 0);
  }
}

Value InValues(const Value& element, const Value& container) {
  if (container.is_list()) {
    for (const Value& item : container.list_value()) {
      if (item == element) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  if (container.is_map()) return Value::Bool(container.Find(element) != nullptr);
  return NoMatchingOverload("in", {&element, &container});
}

}  // namespace

Value NoMatchingOverload(std::string_view name, std::initializer_list<const Value*> arguments) {
  std::string message = "no matching overload for '" + std::string(name) + "' applied to (";
  bool first = true;
  for (const Value* argument : arguments) {
    if (!first) message += ", ";
    first = false;
    message += argument->TypeName();
  }
  message += ")";
  return Value::Error(std::move(message));
}

Value ApplyUnary(Operator op, const Value& operand) {
  if (operand.is_error()) return operand;
  if (op == Operator::kNot) {
    if (operand.is_bool()) return Value::Bool(!operand.bool_value());
    return NoMatchingOverload("!", {&operand});
  }
  if (operand.is_int()) {
    if (operand.int_value() == std::numeric_limits<int64_t>::min()) return IntegerOverflow();
    return Value::Int(-operand.int_value());
  }
  if (operand.is_double()) return Value::Double(-operand.double_value());
  if (operand.kind() == Value::Kind::kDuration) {
    if (operand.duration_value().nanos == std::numeric_limits<int64_t>::min()) {
      return Value::Error("duration overflow");
    }
    return Value::MakeDuration(Duration{-operand.duration_value().nanos});
  }
  return NoMatchingOverload("-", {&operand});
}

Value ApplyBinary(Operator op, const Value& left, const Value& right) {
  if (left.is_error()) return left;
  if (right.is_error()) return right;
  switch (op) {
    case Operator::kAdd:
      return AddValues(left, right);
    case Operator::kSubtract:
      return SubtractValues(left, right);
    case Operator::kMultiply:
      return MultiplyValues(left, right);
    case Operator::kDivide:
      return DivideValues(left, right);
    case Operator::kModulo:
      return ModuloValues(left, right);
    case Operator::kEqual:
      return Value::Bool(left == right);
    case Operator::kNotEqual:
      return Value::Bool(!(left == right));
    case Operator::kLess:
    case Operator::kLessEqual:
    case Operator::kGreater:
    case Operator::kGreaterEqual:
      return CompareValues(op, left, right);
    case Operator::kIn:
      return InValues(left, right);
    case Operator::kNegate:
    case Operator::kNot:
      break;
  }
  return Value::Error(std::string("internal error: '") + OperatorText(op) + "' is not a binary operator");
}

}  // namespace ruleplane::expr
