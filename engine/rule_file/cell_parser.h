// The syntax of a `when` cell (internal to engine/): which form it has and
// where its expressions are, as offsets into the cell's text. The loader then
// checks the expressions and decides whether a bare expression names the
// column's own fact.
//
//   ParseCellSyntax("[0..n)")  -> kRange, low "0" at 1, high "n" at 4, high exclusive
//   ParseCellSyntax("> 0")     -> kCompare kGt, operand "0" at 2
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane {

// A piece of the cell's text holding an expression.
struct CellPart {
  std::string text;
  size_t offset = 0;  // of text[0] within the cell
};

struct CellSyntax {
  enum class Form {
    kAny,      // "-"
    kCompare,  // "OP E"
    kRange,    // "[a..b)" and friends
    kIn,       // "in E"
    kBare,     // "E": a full expression or an implied `==`
  };
  Form form = Form::kAny;
  CompareOp op = CompareOp::kEq;
  CellPart operand;    // kCompare, kIn, kBare
  CellPart low, high;  // kRange
  bool low_inclusive = true, high_inclusive = true;
};

// Errors are kInvalidRuleFile with position.column = 1 + the offset within
// `text` of the problem (position.line is 1).
Result<CellSyntax> ParseCellSyntax(std::string_view text);

}  // namespace ruleplane
