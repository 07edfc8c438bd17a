// The parse tree of a CEL expression (internal to the expression engine).
//
// Macros (has, all, exists, exists_one, filter, map) are recognised by the
// parser and become kHas and kComprehension nodes, as in CEL, so that later
// stages never see them as calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane::expr {

enum class Operator : uint8_t {
  kNegate,
  kNot,
  kAdd,
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
  kIn,
};
const char* OperatorText(Operator op);  // "-", "!", "+", ..., "in"

enum class MacroKind : uint8_t { kAll, kExists, kExistsOne, kFilter, kMap };
const char* MacroName(MacroKind macro);  // "all", "exists", ...

struct AstNode {
  enum class Kind : uint8_t {
    kLiteral,        // literal
    kIdent,          // name
    kSelect,         // children[0].name
    kHas,            // has(children[0].name)
    kIndex,          // children[0][children[1]]
    kCall,           // name(children...), or children[0].name(children[1]...) when receiver_style
    kList,           // [children...]
    kMap,            // {children[0]: children[1], ...}
    kUnary,          // op children[0]
    kBinary,         // children[0] op children[1]
    kAnd,            // children[0] && children[1]
    kOr,             // children[0] || children[1]
    kConditional,    // children[0] ? children[1] : children[2]
    kComprehension,  // children[0].macro(name[, second_name], children[1][, children[2]])
  };

  explicit AstNode(Kind k, int at) : kind(k), offset(at) {}

  Kind kind;
  int offset = 0;  // byte offset of the node's first (or operator) character in Ast::text
  int height = 1;  // 1 + the tallest child's height
  Value literal;
  std::string name;
  std::string second_name;  // two-variable comprehensions: all(k, v, p)
  Operator op = Operator::kAdd;
  MacroKind macro = MacroKind::kAll;
  bool receiver_style = false;
  std::vector<std::unique_ptr<AstNode>> children;
};

struct Ast {
  std::string text;
  std::unique_ptr<AstNode> root;

  // Line and column (1-based, in bytes) of a byte offset in `text`.
  SourcePosition PositionOf(int offset) const;
};

}  // namespace ruleplane::expr
