// CellPredicate: one `when` cell compiled into a test of a frame (internal to
// CompiledRuleSet). Operands are read the cheapest way that is exact: a
// constant, a frame slot (`== n`), or the general expression evaluator.
//
// Cells compare with CEL semantics: ints and doubles compare numerically,
// `==` between unrelated kinds is false, ordering unrelated kinds is an error.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/value.h"
#include "engine/expr/expression.h"
#include "engine/match/quick_check.h"
#include "engine/rule_file/rule_set.h"

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
  // Whether reading the operand is cheap (a constant or a slot, no program).
  bool direct() const { return constant_ || slot_ >= 0; }
  // The frame slot the operand reads as it is, or -1.
  int slot() const { return slot_; }
  // The operand's value; `storage` holds it when it had to be computed.
  const Value& Get(expr::Frame& frame, Value& storage, expr::Budget* budget) const {
    if (const Value* value = Direct(frame)) return *value;
    storage = program_->Evaluate(frame, budget);
    return storage;
  }
  // The operand's value when it is direct(), else nullptr.
  const Value* Direct(const expr::Frame& frame) const {
    if (constant_) return &*constant_;
    if (slot_ >= 0) return &frame[slot_];
    return nullptr;
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
  // Whether testing the cell evaluates no program (its operands are constants or slots).
  bool direct() const;

  enum class Truth : uint8_t { kFalse, kTrue, kError };

  // Tests the cell on `fact_value`, the column's value (kExpression cells
  // read it from `frame`). On kError, `error` receives the error value.
  // Programs' work counts against `budget` (see expr::Budget).
  Truth Check(const Value& fact_value, expr::Frame& frame, Value& error,
              expr::Budget* budget = nullptr) const;

  // The same, as a bool or an error value.
  Value Test(const Value& fact_value, expr::Frame& frame) const;

  // The hot path of matching: the cell's truth without Check, when it has a
  // shortcut (see QuickCheck).
  const QuickCheck& quick_check() const { return quick_check_; }

 private:
  void CompileQuickCheck();

  const Cell* cell_ = nullptr;
  int rule_ = -1;
  int fact_slot_ = -1;
  bool literal_ = false;
  QuickCheck quick_check_;
  std::vector<CellOperand> operands_;  // kCompare, kIn, kExpression: 1; kRange: low, high
};

}  // namespace ruleplane
