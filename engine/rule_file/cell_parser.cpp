#include "engine/rule_file/cell_parser.h"

#include <array>
#include <utility>

namespace ruleplane {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

Error CellError(std::string message, size_t offset) {
  return Error{ErrorCode::kInvalidRuleFile, std::move(message),
               SourcePosition{"", 1, static_cast<int>(offset) + 1}};
}

// The trimmed part of `text` in [begin, end), with its offset.
CellPart Part(std::string_view text, size_t begin, size_t end) {
  while (begin < end && IsSpace(text[begin])) ++begin;
  while (end > begin && IsSpace(text[end - 1])) --end;
  return CellPart{std::string(text.substr(begin, end - begin)), begin};
}

struct RangeShape {
  size_t separator = std::string_view::npos;  // offset of ".." at depth 1
  size_t close = std::string_view::npos;      // offset of the bracket closing the first one
};

// Finds the top-level ".." and the closing bracket of a cell that starts with
// '[' or '(' at `open`, skipping string literals and nested brackets.
RangeShape ScanRange(std::string_view text, size_t open) {
  RangeShape shape;
  int depth = 0;
  char quote = 0;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '(' || c == '{') {
      ++depth;
    } else if (c == ']' || c == ')' || c == '}') {
      if (--depth == 0) {
        shape.close = i;
        return shape;
      }
    } else if (depth == 1 && c == '.' && i + 1 < text.size() && text[i + 1] == '.' &&
               shape.separator == std::string_view::npos) {
      shape.separator = i;
      ++i;
    }
  }
  return shape;
}

Result<CellSyntax> ParseRange(std::string_view text, size_t open, const RangeShape& shape) {
  size_t end = text.size();
  while (end > open && IsSpace(text[end - 1])) --end;
  if (shape.close == std::string_view::npos) {
    return CellError("range cell is missing its closing ']' or ')'", end);
  }
  if (shape.close + 1 != end) {
    return CellError("unexpected text after the range's closing bracket", shape.close + 1);
  }
  CellSyntax cell;
  cell.form = CellSyntax::Form::kRange;
  cell.low_inclusive = text[open] == '[';
  cell.high_inclusive = text[shape.close] == ']';
  cell.low = Part(text, open + 1, shape.separator);
  cell.high = Part(text, shape.separator + 2, shape.close);
  if (cell.low.text.empty()) return CellError("range cell is missing its lower bound", shape.separator);
  if (cell.high.text.empty()) return CellError("range cell is missing its upper bound", shape.separator + 2);
  return cell;
}

}  // namespace

Result<CellSyntax> ParseCellSyntax(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size() && IsSpace(text[begin])) ++begin;
  CellPart whole = Part(text, begin, text.size());
  if (whole.text.empty()) return CellError("empty cell; write '-' for any value", 0);
  CellSyntax cell;
  if (whole.text == "-") return cell;

  static constexpr std::array<std::pair<std::string_view, CompareOp>, 6> kOperators = {{
      {"==", CompareOp::kEq},
      {"!=", CompareOp::kNe},
      {"<=", CompareOp::kLe},
      {">=", CompareOp::kGe},
      {"<", CompareOp::kLt},
      {">", CompareOp::kGt},
  }};
  for (const auto& [symbol, op] : kOperators) {
    if (whole.text.compare(0, symbol.size(), symbol) != 0) continue;
    cell.form = CellSyntax::Form::kCompare;
    cell.op = op;
    cell.operand = Part(text, begin + symbol.size(), text.size());
    if (cell.operand.text.empty()) {
      return CellError("expected an expression after '" + std::string(symbol) + "'", begin + symbol.size());
    }
    return cell;
  }

  if (whole.text.compare(0, 2, "in") == 0 && (whole.text.size() == 2 || !IsIdentifierChar(whole.text[2]))) {
    cell.form = CellSyntax::Form::kIn;
    cell.operand = Part(text, begin + 2, text.size());
    if (cell.operand.text.empty()) return CellError("expected a list expression after 'in'", begin + 2);
    return cell;
  }

  if (whole.text[0] == '[' || whole.text[0] == '(') {
    RangeShape shape = ScanRange(text, begin);
    if (shape.separator != std::string_view::npos) return ParseRange(text, begin, shape);
  }

  cell.form = CellSyntax::Form::kBare;
  cell.operand = whole;
  return cell;
}

}  // namespace ruleplane
