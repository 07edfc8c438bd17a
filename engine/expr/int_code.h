// IntCode: a checked tree of integer and boolean arithmetic over frame slots
// (`2 * notReady >= clusterSize`, `pdbMinAvailable != clusterSize / 2 + 1`,
// `ready > 0 && !scaling`), flattened into postfix code over int64 that runs
// without building a Value (internal to the expression engine).
//
// The code only ever answers what the tree would answer: it gives up whenever
// the tree could say something else, namely when a slot does not hold the
// kind the code reads (an int where it computes, a bool where it tests), on
// overflow, and on division or modulus by zero. Program::Evaluate then runs
// the tree, which produces CEL's value or error. Operands of && || ?: are all
// evaluated, which changes nothing: the code has no side effects, and where
// short-circuiting would have hidden an error the code gives up instead.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/expr/program_node.h"

namespace ruleplane::expr {

class IntCode {
 public:
  enum class Type : uint8_t { kInt, kBool };

  // Code for `root`, or nullptr when the tree uses anything but int and bool
  // constants, slots, arithmetic, comparisons, ! && || and ?:, or when it is a
  // lone constant or slot (nothing to gain).
  static std::unique_ptr<const IntCode> Compile(const Node& root);

  Type result_type() const { return result_type_; }

  // Runs the code; false when it gives up (see above).
  bool Run(const Frame& frame, int64_t& result) const;

 private:
  enum class Op : uint8_t {
    kPush,  // the operand
    kNegate,
    kNot,
    kAdd,  // top = top + operand, and so on
    kSubtract,
    kMultiply,
    kDivide,
    kModulo,
    kEqual,
    kNotEqual,
    kLess,
    kLessEqual,
    kGreater,
    kGreaterEqual,
    kAnd,
    kOr,
    kSelect,  // condition, then-value, else-value -> one of them
  };
  // Where an instruction's operand comes from: binary operators whose right
  // side is a constant or a slot read it directly instead of from the stack.
  enum class Source : uint8_t {
    kNone,      // no operand (kNegate, kNot, kSelect)
    kStack,     // popped
    kConstant,  // Instruction::operand
    kIntSlot,   // frame[operand], which must be an int
    kBoolSlot,  // frame[operand] as 0 or 1, which must be a bool
  };
  struct Instruction {
    Op op;
    Source source;
    int64_t operand = 0;
  };
  static constexpr int kMaxDepth = 16;

  class Emitter;
  std::vector<Instruction> code_;
  Type result_type_ = Type::kBool;
};

}  // namespace ruleplane::expr
