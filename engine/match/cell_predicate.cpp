#include "engine/match/cell_predicate.h"

#include <cmath>
#include <string_view>
#include <utility>

namespace ruleplane {
namespace {

bool IsNumber(const Value& v) { return v.is_int() || v.is_double(); }
bool IsNaN(const Value& v) { return v.is_double() && std::isnan(v.double_value()); }

// Whether CEL orders values of these two kinds against each other.
bool Orderable(const Value& a, const Value& b) {
  if (IsNumber(a) && IsNumber(b)) return true;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kBool:
    case Value::Kind::kString:
    case Value::Kind::kTimestamp:
    case Value::Kind::kDuration:
      return true;
    default:
      return false;
  }
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

Value ExpectBool(Value v, const char* what) {
  if (v.is_bool() || v.is_error()) return v;
  return Value::Error(std::string(what) + " must be a bool, got " + v.TypeName());
}

}  // namespace

Value CompareValues(CompareOp op, const Value& a, const Value& b) {
  if (a.is_error()) return a;
  if (b.is_error()) return b;
  switch (op) {
    case CompareOp::kEq:
      return Value::Bool(a == b);
    case CompareOp::kNe:
      return Value::Bool(!(a == b));
    default:
      break;
  }
  if (!Orderable(a, b)) {
    return Value::Error(std::string("no matching overload for '") + CompareOpText(op) + "' applied to (" +
                        a.TypeName() + ", " + b.TypeName() + ")");
  }
  if (IsNaN(a) || IsNaN(b)) return Value::Bool(false);
  const int order = Value::Compare(a, b);
  switch (op) {
    case CompareOp::kLt:
      return Value::Bool(order < 0);
    case CompareOp::kLe:
      return Value::Bool(order <= 0);
    case CompareOp::kGt:
      return Value::Bool(order > 0);
    case CompareOp::kGe:
      return Value::Bool(order >= 0);
    default:
      return Value::Bool(false);
  }
}

Value ValueIn(const Value& element, const Value& container) {
  if (element.is_error()) return element;
  if (container.is_error()) return container;
  if (container.is_list()) {
    for (const Value& item : container.list_value()) {
      if (item == element) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  if (container.is_map()) {
    for (const auto& entry : container.map_value()) {
      if (entry.first == element) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  return Value::Error(std::string("no matching overload for 'in' applied to (") + element.TypeName() + ", " +
                      container.TypeName() + ")");
}

CellOperand CellOperand::FromExpression(const Expression& expression,
                                        const std::vector<std::string>& slot_names) {
  CellOperand operand;
  operand.program_ = expression.program.get();
  if (expression.program->constant()) {
    operand.constant_ = *expression.program->constant();
    return operand;
  }
  const std::vector<int>& slots = expression.program->referenced_slots();
  if (slots.size() == 1 && slots[0] < static_cast<int>(slot_names.size()) &&
      Trim(expression.text) == slot_names[slots[0]]) {
    operand.slot_ = slots[0];
  }
  return operand;
}

Result<CellPredicate> CellPredicate::Compile(const RuleSet& rule_set, int rule, int cell,
                                             const std::vector<std::string>& slot_names) {
  const Cell& source = rule_set.rules[rule].cells[cell];
  CellPredicate predicate;
  predicate.cell_ = &source;
  predicate.rule_ = rule;
  predicate.fact_slot_ = source.fact;
  auto missing = [&](const char* what) {
    return Error{ErrorCode::kInternal,
                 "rule '" + rule_set.rules[rule].id + "': cell '" + source.text + "' has no compiled " + what,
                 source.position};
  };
  if (source.fact < 0 || source.fact >= static_cast<int>(rule_set.facts.size())) {
    return Error{ErrorCode::kInternal,
                 "rule '" + rule_set.rules[rule].id + "': cell '" + source.text + "' names no fact",
                 source.position};
  }
  switch (source.kind) {
    case Cell::Kind::kAny:
      break;
    case Cell::Kind::kCompare:
    case Cell::Kind::kIn:
    case Cell::Kind::kExpression:
      if (!source.operand || !source.operand->program) return missing("operand");
      predicate.operands_.push_back(CellOperand::FromExpression(*source.operand, slot_names));
      break;
    case Cell::Kind::kRange:
      if (!source.low || !source.low->program || !source.high || !source.high->program) {
        return missing("range bounds");
      }
      predicate.operands_.push_back(CellOperand::FromExpression(*source.low, slot_names));
      predicate.operands_.push_back(CellOperand::FromExpression(*source.high, slot_names));
      break;
  }
  predicate.literal_ = true;
  for (const CellOperand& operand : predicate.operands_) {
    if (!operand.constant()) predicate.literal_ = false;
  }
  predicate.CompileQuickCheck();
  return predicate;
}

void CellPredicate::CompileQuickCheck() {
  if (cell_->kind == Cell::Kind::kExpression && !operands_[0].direct()) {
    quick_check_ = QuickCheck::Program(*cell_->operand->program);
    return;
  }
  std::vector<CompareOp> ops;
  if (cell_->kind == Cell::Kind::kCompare) ops = {cell_->op};
  if (cell_->kind == Cell::Kind::kRange) {
    ops = {cell_->low_inclusive ? CompareOp::kGe : CompareOp::kGt,
           cell_->high_inclusive ? CompareOp::kLe : CompareOp::kLt};
  }
  QuickCheck::IntBound bounds[2];
  for (size_t i = 0; i < ops.size(); ++i) {
    const CellOperand& operand = operands_[i];
    bounds[i].op = ops[i];
    if (operand.constant() && operand.constant()->is_int()) {
      bounds[i].constant = operand.constant()->int_value();
    } else if (operand.slot() >= 0) {
      bounds[i].slot = operand.slot();
    } else {
      return;
    }
  }
  quick_check_ = QuickCheck::Bounds(fact_slot_, bounds, static_cast<int>(ops.size()));
}

bool CellPredicate::direct() const {
  for (const CellOperand& operand : operands_) {
    if (!operand.direct()) return false;
  }
  return cell_->kind != Cell::Kind::kExpression || operands_[0].direct();
}

namespace {

using Truth = CellPredicate::Truth;

Truth ToTruth(Value result, Value& error) {
  if (result.is_bool()) return result.bool_value() ? Truth::kTrue : Truth::kFalse;
  error = std::move(result);
  return Truth::kError;
}

// CompareValues, with a shortcut for the common case of two ints.
Truth Compare(CompareOp op, const Value& a, const Value& b, Value& error) {
  if (a.is_int() && b.is_int())
    return CompareInts(op, a.int_value(), b.int_value()) ? Truth::kTrue : Truth::kFalse;
  return ToTruth(CompareValues(op, a, b), error);
}

}  // namespace

CellPredicate::Truth CellPredicate::Check(const Value& fact_value, expr::Frame& frame, Value& error,
                                          expr::Budget* budget) const {
  Value storage;
  switch (cell_->kind) {
    case Cell::Kind::kAny:
      return Truth::kTrue;
    case Cell::Kind::kCompare:
      return Compare(cell_->op, fact_value, operands_[0].Get(frame, storage, budget), error);
    case Cell::Kind::kIn:
      return ToTruth(ValueIn(fact_value, operands_[0].Get(frame, storage, budget)), error);
    case Cell::Kind::kExpression:
      return ToTruth(ExpectBool(operands_[0].Get(frame, storage, budget), "the cell"), error);
    case Cell::Kind::kRange: {
      // Both bounds are tested, as CEL's && would: a false side decides even
      // when the other side is an error.
      Value low_error;
      const Truth low = Compare(cell_->low_inclusive ? CompareOp::kGe : CompareOp::kGt, fact_value,
                                operands_[0].Get(frame, storage, budget), low_error);
      if (low == Truth::kFalse) return low;
      const Truth high = Compare(cell_->high_inclusive ? CompareOp::kLe : CompareOp::kLt, fact_value,
                                 operands_[1].Get(frame, storage, budget), error);
      if (high == Truth::kFalse) return high;
      if (low == Truth::kError) {
        error = std::move(low_error);
        return low;
      }
      return high;
    }
  }
  error = Value::Error("unknown cell kind");
  return Truth::kError;
}

Value CellPredicate::Test(const Value& fact_value, expr::Frame& frame) const {
  Value error;
  switch (Check(fact_value, frame, error)) {
    case Truth::kFalse:
      return Value::Bool(false);
    case Truth::kTrue:
      return Value::Bool(true);
    case Truth::kError:
      break;
  }
  return error;
}

}  // namespace ruleplane
