// CellPredicate: one `when` cell compiled into a test of a frame (internal to
// CompiledRuleSet). Operands are read the cheapest way that is exact: a
// constant, a frame slot (`== n`), or the general expression evaluator.
//
// Cells compare with CEL semantics: ints and doubles compare numerically,
// `==` between unrelated kinds is false, ordering unrelated kinds is an error.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/expression.h"
#include "engine/rule_set.h"
#include "engine/value.h"

namespace ruleplane {

// CEL's `a op b` for the six comparison operators: a bool, or an error value
// when either side is an error or the kinds cannot be ordered.
Value CompareValues(CompareOp op, const Value& a, const Value& b);

// CEL's `element in container`: list membership or map key membership.
Value ValueIn(const Value& element, const Value& container);

// A value a cell reads: a constant, a frame slot, or a program to evaluate.
class CellOperand {
 public:
  // `slot_names[i]` is the name bound to frame slot i.
  static CellOperand FromExpression(const Expression& expression, const std::vector<std::string>& slot_names);

  const std::optional<Value>& constant() const { return constant_; }
  Value Get(expr::Frame& frame) const {
    if (constant_) return *constant_;
    if (slot_ >= 0) return frame[slot_];
    return program_->Evaluate(frame);
  }

 private:
  std::optional<Value> constant_;
  int slot_ = -1;
  const expr::Program* program_ = nullptr;
};

class CellPredicate {
 public:
  static Result<CellPredicate> Compile(const RuleSet& rule_set, int rule, int cell,
                                       const std::vector<std::string>& slot_names);

  // Whether the cell's truth depends on the fact's value alone (every operand
  // is a constant), so that it can be answered from the column index.
  bool literal() const { return literal_; }
  int rule() const { return rule_; }
  int fact_slot() const { return fact_slot_; }
  const Cell& cell() const { return *cell_; }

  // A bool, or an error value. `fact_value` is the column's value; kExpression
  // cells read it from `frame` instead.
  Value Test(const Value& fact_value, expr::Frame& frame) const;

 private:
  const Cell* cell_ = nullptr;
  int rule_ = -1;
  int fact_slot_ = -1;
  bool literal_ = false;
  std::vector<CellOperand> operands_;          // kCompare, kIn, kExpression: 1; kRange: low, high
  const expr::Program* expression_ = nullptr;  // kExpression
};

}  // namespace ruleplane
