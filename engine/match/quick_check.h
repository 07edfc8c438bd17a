// QuickCheck: the shortcut through which the matcher decides a cell or a
// condition without the general evaluator (internal to CompiledRuleSet):
//   - a fact compared with int constants or slots, one bound (`== n`, `> 0`)
//     or two (`[0..n)`), when all are ints;
//   - a program of plain int and bool arithmetic (`2 * notReady >= n`),
//     through Program::QuickBool.
// Anything else, or a value of another kind, makes Run answer -1: then the
// cell's or condition's full evaluation decides. Small and self-contained, so
// that the matcher can keep the checks it shares between rules side by side.
#pragma once

#include <cstdint>

#include "engine/expr/expression.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane {

inline bool CompareInts(CompareOp op, int64_t a, int64_t b) {
  switch (op) {
    case CompareOp::kEq:
      return a == b;
    case CompareOp::kNe:
      return a != b;
    case CompareOp::kLt:
      return a < b;
    case CompareOp::kLe:
      return a <= b;
    case CompareOp::kGt:
      return a > b;
    case CompareOp::kGe:
      return a >= b;
  }
  return false;
}

class QuickCheck {
 public:
  struct IntBound {
    CompareOp op = CompareOp::kEq;
    int slot = -1;  // or, when -1, the constant
    int64_t constant = 0;
  };

  QuickCheck() = default;  // answers nothing
  static QuickCheck Bounds(int fact_slot, const IntBound* bounds, int count) {
    QuickCheck check;
    check.fact_slot_ = fact_slot;
    check.bound_count_ = count;
    for (int i = 0; i < count; ++i) check.bounds_[i] = bounds[i];
    return check;
  }
  static QuickCheck Program(const expr::Program& program) {
    QuickCheck check;
    if (program.has_quick_bool()) check.program_ = &program;
    return check;
  }

  // Whether Run can ever answer.
  bool usable() const { return program_ != nullptr || bound_count_ > 0; }
  bool runs_program() const { return program_ != nullptr; }

  // 1 or 0, or -1 when the full evaluation must decide.
  int Run(const expr::Frame& frame) const {
    if (program_ != nullptr) return program_->QuickBool(frame);
    if (bound_count_ == 0) return -1;
    const Value& fact_value = frame[fact_slot_];
    if (!fact_value.is_int()) return -1;
    const int64_t value = fact_value.int_value();
    bool holds = true;
    for (int i = 0; i < bound_count_; ++i) {
      const IntBound& bound = bounds_[i];
      int64_t operand = bound.constant;
      if (bound.slot >= 0) {
        const Value& slot_value = frame[bound.slot];
        if (!slot_value.is_int()) return -1;
        operand = slot_value.int_value();
      }
      holds = CompareInts(bound.op, value, operand) && holds;
    }
    return holds;
  }

 private:
  int fact_slot_ = -1;
  int bound_count_ = 0;
  IntBound bounds_[2];
  const expr::Program* program_ = nullptr;
};

}  // namespace ruleplane
