#include "engine/expr/ast.h"

namespace ruleplane::expr {

const char* OperatorText(Operator op) {
  switch (op) {
    case Operator::kNegate:
    case Operator::kSubtract:
      return "-";
    case Operator::kNot:
      return "!";
    case Operator::kAdd:
      return "+";
    case Operator::kMultiply:
      return "*";
    case Operator::kDivide:
      return "/";
    case Operator::kModulo:
      return "%";
    case Operator::kEqual:
      return "==";
    case Operator::kNotEqual:
      return "!=";
    case Operator::kLess:
      return "<";
    case Operator::kLessEqual:
      return "<=";
    case Operator::kGreater:
      return ">";
    case Operator::kGreaterEqual:
      return ">=";
    case Operator::kIn:
      return "in";
  }
  return "?";
}

const char* MacroName(MacroKind macro) {
  switch (macro) {
    case MacroKind::kAll:
      return "all";
    case MacroKind::kExists:
      return "exists";
    case MacroKind::kExistsOne:
      return "exists_one";
    case MacroKind::kFilter:
      return "filter";
    case MacroKind::kMap:
      return "map";
  }
  return "?";
}

SourcePosition Ast::PositionOf(int offset) const {
  SourcePosition position;
  position.line = 1;
  position.column = 1;
  for (int i = 0; i < offset && i < static_cast<int>(text.size()); ++i) {
    if (text[i] == '\n') {
      ++position.line;
      position.column = 1;
    } else {
      ++position.column;
    }
  }
  return position;
}

}  // namespace ruleplane::expr
