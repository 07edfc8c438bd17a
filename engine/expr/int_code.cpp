#include "engine/expr/int_code.h"

#include <limits>
#include <optional>

namespace ruleplane::expr {

class IntCode::Emitter {
 public:
  explicit Emitter(std::vector<Instruction>& code) : code_(code) {}

  // The type a node computes when it is not a bare slot (whose type only its
  // context tells), or nullopt.
  static std::optional<Type> StaticType(const Node& node) {
    switch (node.kind) {
      case Node::Kind::kConstant:
        if (node.value.is_int()) return Type::kInt;
        if (node.value.is_bool()) return Type::kBool;
        return std::nullopt;
      case Node::Kind::kUnary:
        return node.op == Operator::kNegate ? Type::kInt : Type::kBool;
      case Node::Kind::kBinary:
        if (IsArithmetic(node.op)) return Type::kInt;
        if (node.op == Operator::kIn) return std::nullopt;
        return Type::kBool;
      case Node::Kind::kAnd:
      case Node::Kind::kOr:
        return Type::kBool;
      case Node::Kind::kConditional: {
        const auto then_type = StaticType(*node.children[1]);
        return then_type ? then_type : StaticType(*node.children[2]);
      }
      default:
        return std::nullopt;
    }
  }

  // Emits code leaving one value of type `want` on the stack; false when the
  // node is not of that type or uses something the code cannot run.
  bool Emit(const Node& node, Type want) {
    switch (node.kind) {
      case Node::Kind::kConstant:
      case Node::Kind::kSlot: {
        Source source;
        int64_t operand;
        return Operand(node, want, source, operand) && Push(source, operand);
      }
      case Node::Kind::kUnary:
        if (node.op == Operator::kNegate) {
          return want == Type::kInt && Emit(*node.children[0], Type::kInt) && Apply(Op::kNegate, 0);
        }
        return want == Type::kBool && Emit(*node.children[0], Type::kBool) && Apply(Op::kNot, 0);
      case Node::Kind::kBinary:
        return EmitBinary(node, want);
      case Node::Kind::kAnd:
      case Node::Kind::kOr:
        return want == Type::kBool && EmitOperator(node.kind == Node::Kind::kAnd ? Op::kAnd : Op::kOr,
                                                   *node.children[0], *node.children[1], Type::kBool);
      case Node::Kind::kConditional:
        return Emit(*node.children[0], Type::kBool) && Emit(*node.children[1], want) &&
               Emit(*node.children[2], want) && Apply(Op::kSelect, 2);
      default:
        return false;
    }
  }

 private:
  static bool IsArithmetic(Operator op) {
    return op == Operator::kAdd || op == Operator::kSubtract || op == Operator::kMultiply ||
           op == Operator::kDivide || op == Operator::kModulo;
  }

  bool EmitBinary(const Node& node, Type want) {
    const Node& left = *node.children[0];
    const Node& right = *node.children[1];
    if (IsArithmetic(node.op)) {
      return want == Type::kInt && EmitOperator(ArithmeticOp(node.op), left, right, Type::kInt);
    }
    if (want != Type::kBool || node.op == Operator::kIn) return false;
    const auto left_type = StaticType(left);
    const auto right_type = StaticType(right);
    // `1 == true` is false in CEL, not an error: leave mixed kinds to the tree.
    if (left_type && right_type && *left_type != *right_type) return false;
    const Type operands = left_type ? *left_type : right_type.value_or(Type::kInt);
    const bool ordering = node.op != Operator::kEqual && node.op != Operator::kNotEqual;
    if (ordering && operands != Type::kInt) return false;
    return EmitOperator(ComparisonOp(node.op), left, right, operands);
  }

  // `left op right`, both of type `operands`; a constant or slot on the right
  // is read by the operator's instruction itself.
  bool EmitOperator(Op op, const Node& left, const Node& right, Type operands) {
    if (!Emit(left, operands)) return false;
    Source source;
    int64_t operand;
    if (Operand(right, operands, source, operand)) {
      code_.push_back({op, source, operand});
      return true;
    }
    return Emit(right, operands) && Apply(op, 1);
  }

  // How an instruction reads `node` of type `want` directly: false when the
  // node is neither such a constant nor a slot.
  static bool Operand(const Node& node, Type want, Source& source, int64_t& operand) {
    if (node.kind == Node::Kind::kSlot) {
      source = want == Type::kInt ? Source::kIntSlot : Source::kBoolSlot;
      operand = node.slot;
      return true;
    }
    if (node.kind != Node::Kind::kConstant) return false;
    source = Source::kConstant;
    if (want == Type::kInt && node.value.is_int()) {
      operand = node.value.int_value();
      return true;
    }
    if (want == Type::kBool && node.value.is_bool()) {
      operand = node.value.bool_value();
      return true;
    }
    return false;
  }

  static Op ArithmeticOp(Operator op) {
    switch (op) {
      case Operator::kAdd:
        return Op::kAdd;
      case Operator::kSubtract:
        return Op::kSubtract;
      case Operator::kMultiply:
        return Op::kMultiply;
      case Operator::kDivide:
        return Op::kDivide;
      default:
        return Op::kModulo;
    }
  }

  static Op ComparisonOp(Operator op) {
    switch (op) {
      case Operator::kEqual:
        return Op::kEqual;
      case Operator::kNotEqual:
        return Op::kNotEqual;
      case Operator::kLess:
        return Op::kLess;
      case Operator::kLessEqual:
        return Op::kLessEqual;
      case Operator::kGreater:
        return Op::kGreater;
      default:
        return Op::kGreaterEqual;
    }
  }

  bool Push(Source source, int64_t operand) {
    code_.push_back({Op::kPush, source, operand});
    return ++depth_ <= kMaxDepth;
  }

  // An operator on the stack alone, which pops `consumed` values more than it
  // pushes: a binary operator pops its operand first (kStack), ?: takes its three itself.
  bool Apply(Op op, int consumed) {
    code_.push_back({op, consumed == 1 ? Source::kStack : Source::kNone, 0});
    depth_ -= consumed;
    return true;
  }

  std::vector<Instruction>& code_;
  int depth_ = 0;
};

std::unique_ptr<const IntCode> IntCode::Compile(const Node& root) {
  if (root.kind == Node::Kind::kConstant || root.kind == Node::Kind::kSlot) return nullptr;
  const auto type = Emitter::StaticType(root);
  if (!type) return nullptr;
  std::unique_ptr<IntCode> code(new IntCode());
  code->result_type_ = *type;
  Emitter emitter(code->code_);
  if (!emitter.Emit(root, *type)) return nullptr;
  return code;
}

bool IntCode::Run(const Frame& frame, int64_t& result) const {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  int64_t stack[kMaxDepth];
  int top = 0;  // values on the stack
  for (const Instruction& instruction : code_) {
    int64_t b = 0;  // the operand
    switch (instruction.source) {
      case Source::kNone:
        break;
      case Source::kStack:
        b = stack[--top];
        break;
      case Source::kConstant:
        b = instruction.operand;
        break;
      case Source::kIntSlot: {
        const Value& value = frame[instruction.operand];
        if (!value.is_int()) return false;
        b = value.int_value();
        break;
      }
      case Source::kBoolSlot: {
        const Value& value = frame[instruction.operand];
        if (!value.is_bool()) return false;
        b = value.bool_value();
        break;
      }
    }
    if (instruction.op == Op::kPush) {
      stack[top++] = b;
      continue;
    }
    int64_t& a = stack[top - 1];
    switch (instruction.op) {
      case Op::kPush:
        break;
      case Op::kNegate:
        if (a == kMin) return false;
        a = -a;
        break;
      case Op::kNot:
        a = !a;
        break;
      case Op::kSelect:
        top -= 2;
        stack[top - 1] = stack[top - 1] ? stack[top] : stack[top + 1];
        break;
      case Op::kAdd:
        if (__builtin_add_overflow(a, b, &a)) return false;
        break;
      case Op::kSubtract:
        if (__builtin_sub_overflow(a, b, &a)) return false;
        break;
      case Op::kMultiply:
        if (__builtin_mul_overflow(a, b, &a)) return false;
        break;
      case Op::kDivide:
        if (b == 0 || (a == kMin && b == -1)) return false;
        a /= b;
        break;
      case Op::kModulo:
        if (b == 0 || (a == kMin && b == -1)) return false;
        a %= b;
        break;
      case Op::kEqual:
        a = a == b;
        break;
      case Op::kNotEqual:
        a = a != b;
        break;
      case Op::kLess:
        a = a < b;
        break;
      case Op::kLessEqual:
        a = a <= b;
        break;
      case Op::kGreater:
        a = a > b;
        break;
      case Op::kGreaterEqual:
        a = a >= b;
        break;
      case Op::kAnd:
        a = a && b;
        break;
      case Op::kOr:
        a = a || b;
        break;
    }
  }
  result = stack[0];
  return true;
}

}  // namespace ruleplane::expr
