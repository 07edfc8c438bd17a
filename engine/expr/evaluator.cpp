// Evaluation of a checked tree. Each Eval returns a reference either into the
// frame or a constant (no copy) or to the `scratch` Value the caller passed, so
// that slot reads, field selections and comparisons do not copy or allocate.
#include <array>
#include <cstdint>
#include <string>

#include "engine/expr/budget.h"
#include "engine/expr/functions.h"
#include "engine/expr/operators.h"
#include "engine/expr/program_node.h"

namespace ruleplane::expr {
namespace {

const Value kTrue = Value::Bool(true);
const Value kFalse = Value::Bool(false);

const Value& BoolRef(bool b) { return b ? kTrue : kFalse; }

// The result `value`, which may live in (or inside) `local`, as a reference
// that outlives the caller's locals.
const Value& Escape(const Value& value, Value& local, Value& scratch) {
  if (&value == &local) {
    scratch = std::move(local);
    return scratch;
  }
  return value;
}

std::string KeyText(const Value& key) { return key.is_string() ? key.string_value() : key.DebugString(); }

// What building `value` cost: its bytes or elements (scalars are free).
int64_t BuiltSize(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kString:
      return static_cast<int64_t>(value.string_value().size());
    case Value::Kind::kList:
      return static_cast<int64_t>(value.list_value().size());
    case Value::Kind::kMap:
      return static_cast<int64_t>(value.map_value().size());
    default:
      return 0;
  }
}

class Evaluator {
 public:
  Evaluator(Frame& frame, const Limits& limits, Budget& budget)
      : frame_(frame), limits_(limits), budget_(budget) {}

  const Value& Eval(const Node& node, Value& scratch) {
    if (budget_.exhausted()) return Exhausted(scratch);
    switch (node.kind) {
      case Node::Kind::kConstant:
        return node.value;
      case Node::Kind::kSlot:
        return frame_[node.slot];
      case Node::Kind::kSelect:
      case Node::Kind::kHas:
        return EvalSelect(node, scratch);
      case Node::Kind::kIndex:
        return EvalIndex(node, scratch);
      case Node::Kind::kList:
        return EvalList(node, scratch);
      case Node::Kind::kMap:
        return EvalMap(node, scratch);
      case Node::Kind::kUnary: {
        Value local;
        const Value& operand = Eval(*node.children[0], local);
        if (node.op == Operator::kNot && operand.is_bool()) return BoolRef(!operand.bool_value());
        scratch = ApplyUnary(node.op, operand);
        return scratch;
      }
      case Node::Kind::kBinary:
        return EvalBinary(node, scratch);
      case Node::Kind::kAnd:
      case Node::Kind::kOr:
        return EvalLogical(node, scratch);
      case Node::Kind::kConditional: {
        Value local;
        const Value& condition = Eval(*node.children[0], local);
        if (condition.is_bool()) return Eval(*node.children[condition.bool_value() ? 1 : 2], scratch);
        if (condition.is_error()) return Escape(condition, local, scratch);
        scratch = NoMatchingOverload("?:", {&condition});
        return scratch;
      }
      case Node::Kind::kCall:
        return EvalCall(node, scratch);
      case Node::Kind::kComprehension:
        return EvalComprehension(node, scratch);
    }
    scratch = Value::Error("internal error: unknown node");
    return scratch;
  }

 private:
  const Value& Exhausted(Value& scratch) {
    scratch = Value::Error(budget_.Message());
    return scratch;
  }

  // Charges what building the value in `scratch` cost.
  const Value& Built(Value& scratch) {
    if (!budget_.Charge(BuiltSize(scratch))) return Exhausted(scratch);
    return scratch;
  }

  const Value& EvalSelect(const Node& node, Value& scratch) {
    Value local;
    const Value& operand = Eval(*node.children[0], local);
    if (operand.is_map()) {
      const Value* found = operand.Find(node.field);
      if (node.kind == Node::Kind::kHas) return BoolRef(found != nullptr);
      if (found == nullptr) {
        scratch = Value::Error("no such key: " + node.field);
        return scratch;
      }
      if (&operand != &local) return *found;
      scratch = *found;
      return scratch;
    }
    if (operand.is_error()) return Escape(operand, local, scratch);
    scratch = Value::Error(std::string("type '") + operand.TypeName() +
                           "' does not support field selection (." + node.field + ")");
    return scratch;
  }

  const Value& EvalIndex(const Node& node, Value& scratch) {
    Value local_operand, local_index;
    const Value& operand = Eval(*node.children[0], local_operand);
    if (operand.is_error()) return Escape(operand, local_operand, scratch);
    const Value& index = Eval(*node.children[1], local_index);
    if (index.is_error()) return Escape(index, local_index, scratch);
    const Value* found = nullptr;
    if (operand.is_list()) {
      int64_t position = 0;
      if (index.is_int()) {
        position = index.int_value();
      } else if (index.is_double() &&
                 index.double_value() == static_cast<double>(static_cast<int64_t>(index.double_value()))) {
        position = static_cast<int64_t>(index.double_value());
      } else {
        scratch = NoMatchingOverload("[]", {&operand, &index});
        return scratch;
      }
      const auto& items = operand.list_value();
      if (position < 0 || position >= static_cast<int64_t>(items.size())) {
        scratch = Value::Error("index out of range: " + std::to_string(position) + " (list size " +
                               std::to_string(items.size()) + ")");
        return scratch;
      }
      found = &items[position];
    } else if (operand.is_map()) {
      found = operand.Find(index);
      if (found == nullptr) {
        scratch = Value::Error("no such key: " + KeyText(index));
        return scratch;
      }
    } else {
      scratch = NoMatchingOverload("[]", {&operand, &index});
      return scratch;
    }
    if (&operand != &local_operand) return *found;
    scratch = *found;
    return scratch;
  }

  const Value& EvalList(const Node& node, Value& scratch) {
    Value::List items;
    items.reserve(node.children.size());
    for (const auto& child : node.children) {
      Value local;
      const Value& item = Eval(*child, local);
      if (item.is_error()) return Escape(item, local, scratch);
      items.push_back(item);
    }
    scratch = Value::MakeList(std::move(items));
    return Built(scratch);
  }

  const Value& EvalMap(const Node& node, Value& scratch) {
    Value::Map entries;
    entries.reserve(node.children.size() / 2);
    for (size_t i = 0; i + 1 < node.children.size(); i += 2) {
      Value local_key, local_value;
      const Value& key = Eval(*node.children[i], local_key);
      if (key.is_error()) return Escape(key, local_key, scratch);
      const Value& value = Eval(*node.children[i + 1], local_value);
      if (value.is_error()) return Escape(value, local_value, scratch);
      if (!key.is_string() && !key.is_int() && !key.is_bool()) {
        scratch = Value::Error(std::string("unsupported map key type: ") + key.TypeName() +
                               " (keys are string, int or bool)");
        return scratch;
      }
      for (const auto& entry : entries) {
        if (entry.first == key) {
          scratch = Value::Error("repeated key in map literal: " + key.DebugString());
          return scratch;
        }
      }
      entries.emplace_back(key, value);
    }
    scratch = Value::MakeMap(std::move(entries));
    return Built(scratch);
  }

  const Value& EvalBinary(const Node& node, Value& scratch) {
    Value local_left, local_right;
    const Value& left = Eval(*node.children[0], local_left);
    const Value& right = Eval(*node.children[1], local_right);
    if (left.is_int() && right.is_int()) {
      const int64_t a = left.int_value(), b = right.int_value();
      int64_t out;
      switch (node.op) {
        case Operator::kEqual:
          return BoolRef(a == b);
        case Operator::kNotEqual:
          return BoolRef(a != b);
        case Operator::kLess:
          return BoolRef(a < b);
        case Operator::kLessEqual:
          return BoolRef(a <= b);
        case Operator::kGreater:
          return BoolRef(a > b);
        case Operator::kGreaterEqual:
          return BoolRef(a >= b);
        case Operator::kAdd:
          if (__builtin_add_overflow(a, b, &out)) break;
          scratch = Value::Int(out);
          return scratch;
        case Operator::kSubtract:
          if (__builtin_sub_overflow(a, b, &out)) break;
          scratch = Value::Int(out);
          return scratch;
        case Operator::kMultiply:
          if (__builtin_mul_overflow(a, b, &out)) break;
          scratch = Value::Int(out);
          return scratch;
        default:
          break;
      }
    }
    if (left.is_error()) return Escape(left, local_left, scratch);
    if (right.is_error()) return Escape(right, local_right, scratch);
    scratch = ApplyBinary(node.op, left, right);
    return Built(scratch);
  }

  // CEL's && and ||: commutative and error-absorbing. The right side is not
  // evaluated when the left side decides.
  const Value& EvalLogical(const Node& node, Value& scratch) {
    const bool is_and = node.kind == Node::Kind::kAnd;
    const bool decisive = !is_and;  // false decides &&, true decides ||
    Value local_left, local_right;
    const Value& left = Eval(*node.children[0], local_left);
    if (left.is_bool() && left.bool_value() == decisive) return BoolRef(decisive);
    const Value& right = Eval(*node.children[1], local_right);
    if (right.is_bool() && right.bool_value() == decisive) return BoolRef(decisive);
    if (left.is_bool() && right.is_bool()) return BoolRef(!decisive);
    if (left.is_error()) return Escape(left, local_left, scratch);
    if (right.is_error()) return Escape(right, local_right, scratch);
    scratch = NoMatchingOverload(is_and ? "&&" : "||", {&left, &right});
    return scratch;
  }

  const Value& EvalCall(const Node& node, Value& scratch) {
    std::array<Value, kMaxArguments> locals;
    std::array<const Value*, kMaxArguments> arguments{};
    const size_t count = node.children.size();
    for (size_t i = 0; i < count; ++i) arguments[i] = &Eval(*node.children[i], locals[i]);
    scratch = CallFunction(node, std::span<const Value* const>(arguments.data(), count), limits_, budget_);
    return Built(scratch);
  }

  // Runs the macro over a list (elements; with two variables: index, element)
  // or a map (keys; with two variables: key, value).
  const Value& EvalComprehension(const Node& node, Value& scratch) {
    Value local_range;
    const Value& range = Eval(*node.children[0], local_range);
    if (range.is_error()) return Escape(range, local_range, scratch);
    if (!range.is_list() && !range.is_map()) {
      scratch = NoMatchingOverload(MacroName(node.macro), {&range});
      return scratch;
    }
    const size_t size = range.is_list() ? range.list_value().size() : range.map_value().size();
    const bool two_variables = node.second_slot >= 0;
    const Node& body = *node.children[1];
    const Node* transform = node.children.size() > 2 ? node.children[2].get() : nullptr;
    Value first_error;
    int64_t true_count = 0;
    Value::List results;
    for (size_t i = 0; i < size; ++i) {
      if (!budget_.Charge(1)) return Exhausted(scratch);
      if (range.is_list()) {
        if (two_variables) {
          frame_[node.slot] = Value::Int(static_cast<int64_t>(i));
          frame_[node.second_slot] = range.list_value()[i];
        } else {
          frame_[node.slot] = range.list_value()[i];
        }
      } else {
        frame_[node.slot] = range.map_value()[i].first;
        if (two_variables) frame_[node.second_slot] = range.map_value()[i].second;
      }
      Value local;
      const Value& result = Eval(body, local);
      if (node.macro == MacroKind::kMap && transform == nullptr) {
        if (result.is_error()) return Escape(result, local, scratch);
        results.push_back(result);
        continue;
      }
      if (!result.is_bool()) {
        Value error = result.is_error() ? result
                                        : Value::Error(std::string("predicate of '") + MacroName(node.macro) +
                                                       "' returned " + result.TypeName() + ", expected bool");
        // all and exists absorb errors as && and || do: a decisive element wins.
        if (node.macro == MacroKind::kAll || node.macro == MacroKind::kExists) {
          if (first_error.is_null()) first_error = std::move(error);
          continue;
        }
        scratch = std::move(error);
        return scratch;
      }
      const bool passed = result.bool_value();
      switch (node.macro) {
        case MacroKind::kAll:
          if (!passed) return kFalse;
          break;
        case MacroKind::kExists:
          if (passed) return kTrue;
          break;
        case MacroKind::kExistsOne:
          true_count += passed;
          break;
        case MacroKind::kFilter:
          if (passed) results.push_back(frame_[node.slot]);
          break;
        case MacroKind::kMap:
          if (passed) {
            Value local_transformed;
            const Value& transformed = Eval(*transform, local_transformed);
            if (transformed.is_error()) return Escape(transformed, local_transformed, scratch);
            results.push_back(transformed);
          }
          break;
      }
    }
    switch (node.macro) {
      case MacroKind::kAll:
      case MacroKind::kExists:
        if (!first_error.is_null()) {
          scratch = std::move(first_error);
          return scratch;
        }
        return BoolRef(node.macro == MacroKind::kAll);
      case MacroKind::kExistsOne:
        return BoolRef(true_count == 1);
      case MacroKind::kFilter:
      case MacroKind::kMap:
        break;
    }
    scratch = Value::MakeList(std::move(results));
    return scratch;
  }

  Frame& frame_;
  const Limits& limits_;
  Budget& budget_;
};

}  // namespace

Value EvaluateNode(const Node& node, Frame& frame, const Limits& limits, Budget* budget) {
  Budget own;
  if (budget == nullptr) budget = &own;
  Value scratch;
  const Value& result = Evaluator(frame, limits, *budget).Eval(node, scratch);
  if (budget->exhausted()) return Value::Error(budget->Message());
  if (&result == &scratch) return scratch;
  return result;
}

}  // namespace ruleplane::expr
