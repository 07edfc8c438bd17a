// expr::Parse: a recursive-descent parser for CEL's grammar, building an Ast.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/expr/ast.h"
#include "engine/expr/expression.h"
#include "engine/expr/lexer.h"

namespace ruleplane::expr {
namespace {

using NodePtr = std::unique_ptr<AstNode>;
using Kind = AstNode::Kind;

// Parenthesised or nested sub-expressions allowed, and the deepest tree; both
// keep the recursion of every later stage well inside the stack.
constexpr int kMaxNesting = 200;
constexpr int kMaxHeight = 1000;

bool IsReservedWord(std::string_view word) {
  static constexpr std::string_view kReserved[] = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",    "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while",
  };
  return std::find(std::begin(kReserved), std::end(kReserved), word) != std::end(kReserved);
}

std::optional<MacroKind> ReceiverMacro(std::string_view name) {
  if (name == "all") return MacroKind::kAll;
  if (name == "exists") return MacroKind::kExists;
  if (name == "exists_one") return MacroKind::kExistsOne;
  if (name == "filter") return MacroKind::kFilter;
  if (name == "map") return MacroKind::kMap;
  return std::nullopt;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : lexer_(text) { Advance(); }

  NodePtr ParseAll() {
    NodePtr root = ParseExpr();
    if (root && token_.kind != Token::Kind::kEnd) {
      return Fail(token_.offset,
                  "expected an operator or the end of the expression but found " + DescribeToken(token_));
    }
    return root;
  }

  const std::optional<std::pair<int, std::string>>& error() const { return error_; }

 private:
  void Advance() {
    token_ = lexer_.Next();
    if (token_.kind == Token::Kind::kError) Fail(token_.offset, token_.string_value);
  }

  // Records the first error only; returns null so callers can `return Fail(...)`.
  NodePtr Fail(int offset, std::string message) {
    if (!error_) error_.emplace(offset, std::move(message));
    return nullptr;
  }

  NodePtr Make(Kind kind, int offset, std::vector<NodePtr> children = {}) {
    auto node = std::make_unique<AstNode>(kind, offset);
    for (const NodePtr& child : children) node->height = std::max(node->height, child->height + 1);
    node->children = std::move(children);
    if (node->height > kMaxHeight) {
      return Fail(offset, "expression too large: more than " + std::to_string(kMaxHeight) + " levels deep");
    }
    return node;
  }

  bool Expect(std::string_view punct) {
    if (token_.Is(punct)) {
      Advance();
      return true;
    }
    Fail(token_.offset, "expected '" + std::string(punct) + "' but found " + DescribeToken(token_));
    return false;
  }

  NodePtr ParseExpr() {
    if (++nesting_ > kMaxNesting) {
      return Fail(token_.offset,
                  "expression nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
    }
    NodePtr condition = ParseOr();
    if (condition && token_.Is("?")) {
      const int offset = token_.offset;
      Advance();
      NodePtr if_true = ParseOr();
      if (!if_true || !Expect(":")) return nullptr;
      NodePtr if_false = ParseExpr();
      if (!if_false) return nullptr;
      std::vector<NodePtr> children;
      children.push_back(std::move(condition));
      children.push_back(std::move(if_true));
      children.push_back(std::move(if_false));
      condition = Make(Kind::kConditional, offset, std::move(children));
    }
    --nesting_;
    return condition;
  }

  NodePtr MakeBinary(Kind kind, int offset, NodePtr left, NodePtr right) {
    std::vector<NodePtr> children;
    children.push_back(std::move(left));
    children.push_back(std::move(right));
    return Make(kind, offset, std::move(children));
  }

  NodePtr ParseOr() {
    NodePtr left = ParseAnd();
    while (left && token_.Is("||")) {
      const int offset = token_.offset;
      Advance();
      NodePtr right = ParseAnd();
      if (!right) return nullptr;
      left = MakeBinary(Kind::kOr, offset, std::move(left), std::move(right));
    }
    return left;
  }

  NodePtr ParseAnd() {
    NodePtr left = ParseRelation();
    while (left && token_.Is("&&")) {
      const int offset = token_.offset;
      Advance();
      NodePtr right = ParseRelation();
      if (!right) return nullptr;
      left = MakeBinary(Kind::kAnd, offset, std::move(left), std::move(right));
    }
    return left;
  }

  std::optional<Operator> RelationOperator() const {
    if (token_.Is("==")) return Operator::kEqual;
    if (token_.Is("!=")) return Operator::kNotEqual;
    if (token_.Is("<")) return Operator::kLess;
    if (token_.Is("<=")) return Operator::kLessEqual;
    if (token_.Is(">")) return Operator::kGreater;
    if (token_.Is(">=")) return Operator::kGreaterEqual;
    if (token_.IsKeyword("in")) return Operator::kIn;
    return std::nullopt;
  }

  std::optional<Operator> AdditionOperator() const {
    if (token_.Is("+")) return Operator::kAdd;
    if (token_.Is("-")) return Operator::kSubtract;
    return std::nullopt;
  }

  std::optional<Operator> MultiplicationOperator() const {
    if (token_.Is("*")) return Operator::kMultiply;
    if (token_.Is("/")) return Operator::kDivide;
    if (token_.Is("%")) return Operator::kModulo;
    return std::nullopt;
  }

  // One left-associative level of binary operators.
  template <typename NextLevel, typename OperatorAt>
  NodePtr ParseBinaryLevel(NextLevel next_level, OperatorAt operator_at) {
    NodePtr left = (this->*next_level)();
    while (left) {
      const std::optional<Operator> op = (this->*operator_at)();
      if (!op) break;
      const int offset = token_.offset;
      Advance();
      NodePtr right = (this->*next_level)();
      if (!right) return nullptr;
      left = MakeBinary(Kind::kBinary, offset, std::move(left), std::move(right));
      if (left) left->op = *op;
    }
    return left;
  }

  NodePtr ParseRelation() { return ParseBinaryLevel(&Parser::ParseAddition, &Parser::RelationOperator); }
  NodePtr ParseAddition() {
    return ParseBinaryLevel(&Parser::ParseMultiplication, &Parser::AdditionOperator);
  }
  NodePtr ParseMultiplication() {
    return ParseBinaryLevel(&Parser::ParseUnary, &Parser::MultiplicationOperator);
  }

  NodePtr ParseUnary() {
    std::vector<std::pair<Operator, int>> operators;
    while (token_.Is("!") || token_.Is("-")) {
      operators.emplace_back(token_.Is("!") ? Operator::kNot : Operator::kNegate, token_.offset);
      Advance();
    }
    // As in CEL, a '-' directly before a number is part of the literal, so
    // that -9223372036854775808 is a valid int.
    const bool negative_literal = !operators.empty() && operators.back().first == Operator::kNegate &&
                                  (token_.kind == Token::Kind::kInt || token_.kind == Token::Kind::kDouble);
    int literal_offset = token_.offset;
    if (negative_literal) {
      literal_offset = operators.back().second;
      operators.pop_back();
    }
    NodePtr operand = ParseMember(negative_literal, literal_offset);
    for (auto it = operators.rbegin(); operand && it != operators.rend(); ++it) {
      std::vector<NodePtr> children;
      children.push_back(std::move(operand));
      operand = Make(Kind::kUnary, it->second, std::move(children));
      if (operand) operand->op = it->first;
    }
    return operand;
  }

  NodePtr ParseMember(bool negative_literal, int literal_offset) {
    NodePtr operand = ParsePrimary(negative_literal, literal_offset);
    while (operand) {
      if (token_.Is(".")) {
        const int dot_offset = token_.offset;
        Advance();
        if (token_.Is("?")) return Fail(token_.offset, "unsupported: optional field selection (.?)");
        const bool quoted = token_.kind == Token::Kind::kQuotedIdent;
        if (token_.kind != Token::Kind::kIdent && !quoted) {
          return Fail(token_.offset, "expected a field name after '.' but found " + DescribeToken(token_));
        }
        const std::string name = quoted ? token_.string_value : std::string(token_.text);
        const int name_offset = token_.offset;
        if (!quoted && IsReservedWord(name)) return Fail(name_offset, "reserved identifier '" + name + "'");
        Advance();
        if (quoted && (token_.Is("(") || token_.Is("{"))) {
          return Fail(name_offset, "a quoted name can only select a field: `" + name + "` cannot be called");
        }
        if (token_.Is("(")) {
          operand = ParseReceiverCall(std::move(operand), name, name_offset);
        } else if (token_.Is("{")) {
          return Fail(name_offset, "unsupported: message construction (" + name + "{...})");
        } else {
          std::vector<NodePtr> children;
          children.push_back(std::move(operand));
          operand = Make(Kind::kSelect, dot_offset, std::move(children));
          if (operand) operand->name = name;
        }
      } else if (token_.Is("[")) {
        const int offset = token_.offset;
        Advance();
        if (token_.Is("?")) return Fail(token_.offset, "unsupported: optional index ([?...])");
        NodePtr index = ParseExpr();
        if (!index || !Expect("]")) return nullptr;
        operand = MakeBinary(Kind::kIndex, offset, std::move(operand), std::move(index));
      } else {
        break;
      }
    }
    return operand;
  }

  // Parses "(args...)"; the current token is "(".
  std::optional<std::vector<NodePtr>> ParseArguments() {
    Advance();
    std::vector<NodePtr> arguments;
    if (token_.Is(")")) {
      Advance();
      return arguments;
    }
    while (true) {
      NodePtr argument = ParseExpr();
      if (!argument) return std::nullopt;
      arguments.push_back(std::move(argument));
      if (token_.Is(",")) {
        Advance();
        continue;
      }
      if (!Expect(")")) return std::nullopt;
      return arguments;
    }
  }

  NodePtr ParseReceiverCall(NodePtr receiver, const std::string& name, int name_offset) {
    std::optional<std::vector<NodePtr>> arguments = ParseArguments();
    if (!arguments) return nullptr;
    if (const std::optional<MacroKind> macro = ReceiverMacro(name)) {
      return MakeComprehension(*macro, name_offset, std::move(receiver), std::move(*arguments));
    }
    std::vector<NodePtr> children;
    children.push_back(std::move(receiver));
    for (NodePtr& argument : *arguments) children.push_back(std::move(argument));
    NodePtr call = Make(Kind::kCall, name_offset, std::move(children));
    if (call) {
      call->name = name;
      call->receiver_style = true;
    }
    return call;
  }

  NodePtr MakeComprehension(MacroKind macro, int offset, NodePtr range, std::vector<NodePtr> arguments) {
    const std::string name = MacroName(macro);
    const bool two_variables_allowed =
        macro == MacroKind::kAll || macro == MacroKind::kExists || macro == MacroKind::kExistsOne;
    const size_t count = arguments.size();
    if (count != 2 && !(count == 3 && (two_variables_allowed || macro == MacroKind::kMap))) {
      std::string usage = macro == MacroKind::kMap ? "map(x, transform) or map(x, predicate, transform)"
                          : two_variables_allowed
                              ? name + "(x, predicate) or " + name + "(key, value, predicate)"
                              : name + "(x, predicate)";
      return Fail(offset, "wrong number of arguments to the '" + name + "' macro: expected " + usage);
    }
    const size_t variables = count == 3 && two_variables_allowed ? 2 : 1;
    std::vector<std::string> names;
    for (size_t i = 0; i < variables; ++i) {
      if (arguments[i]->kind != Kind::kIdent) {
        return Fail(arguments[i]->offset, "argument " + std::to_string(i + 1) + " of the '" + name +
                                              "' macro must be a simple name");
      }
      names.push_back(arguments[i]->name);
    }
    std::vector<NodePtr> children;
    children.push_back(std::move(range));
    for (size_t i = variables; i < count; ++i) children.push_back(std::move(arguments[i]));
    NodePtr node = Make(Kind::kComprehension, offset, std::move(children));
    if (node) {
      node->macro = macro;
      node->name = names[0];
      if (variables == 2) node->second_name = names[1];
    }
    return node;
  }

  NodePtr ParsePrimary(bool negative_literal, int literal_offset) {
    const int offset = token_.offset;
    switch (token_.kind) {
      case Token::Kind::kInt: {
        const uint64_t magnitude = token_.int_value;
        constexpr uint64_t kMaxMagnitude = uint64_t{1} << 63;
        if (token_.int_overflow || magnitude > (negative_literal ? kMaxMagnitude : kMaxMagnitude - 1)) {
          return Fail(literal_offset,
                      "integer literal out of range: " + std::string(negative_literal ? "-" : "") +
                          std::string(token_.text));
        }
        NodePtr node = Make(Kind::kLiteral, literal_offset);
        node->literal = Value::Int(negative_literal ? static_cast<int64_t>(0 - magnitude)
                                                    : static_cast<int64_t>(magnitude));
        Advance();
        return node;
      }
      case Token::Kind::kDouble: {
        NodePtr node = Make(Kind::kLiteral, literal_offset);
        node->literal = Value::Double(negative_literal ? -token_.double_value : token_.double_value);
        Advance();
        return node;
      }
      case Token::Kind::kUint:
        return Fail(offset, "unsupported: uint literals (" + std::string(token_.text) + ")");
      case Token::Kind::kBytes:
        return Fail(offset, "unsupported: bytes literals");
      case Token::Kind::kString: {
        NodePtr node = Make(Kind::kLiteral, offset);
        node->literal = Value::String(std::move(token_.string_value));
        Advance();
        return node;
      }
      case Token::Kind::kIdent:
        return ParseIdentifier();
      case Token::Kind::kQuotedIdent:
        return Fail(offset, "a quoted name can only select a field, after '.': " + DescribeToken(token_));
      case Token::Kind::kPunct:
        if (token_.Is("(")) {
          Advance();
          NodePtr inner = ParseExpr();
          if (!inner || !Expect(")")) return nullptr;
          return inner;
        }
        if (token_.Is("[")) return ParseList();
        if (token_.Is("{")) return ParseMap();
        if (token_.Is(".")) return Fail(offset, "unsupported: absolute names (a leading '.')");
        break;
      case Token::Kind::kEnd:
      case Token::Kind::kError:
        break;
    }
    return Fail(offset, "expected an expression but found " + DescribeToken(token_));
  }

  NodePtr ParseIdentifier() {
    const int offset = token_.offset;
    const std::string name(token_.text);
    if (name == "true" || name == "false" || name == "null") {
      NodePtr node = Make(Kind::kLiteral, offset);
      node->literal = name == "null" ? Value::Null() : Value::Bool(name == "true");
      Advance();
      return node;
    }
    if (name == "in") return Fail(offset, "expected an expression but found 'in'");
    if (IsReservedWord(name)) return Fail(offset, "reserved identifier '" + name + "'");
    Advance();
    if (token_.Is("{")) return Fail(offset, "unsupported: message construction (" + name + "{...})");
    if (!token_.Is("(")) {
      NodePtr node = Make(Kind::kIdent, offset);
      node->name = name;
      return node;
    }
    std::optional<std::vector<NodePtr>> arguments = ParseArguments();
    if (!arguments) return nullptr;
    if (name == "has") {
      if (arguments->size() != 1 || (*arguments)[0]->kind != Kind::kSelect) {
        return Fail(arguments->empty() ? offset : (*arguments)[0]->offset,
                    "invalid argument to has(): expected a field selection such as has(a.b)");
      }
      NodePtr node = std::move((*arguments)[0]);
      node->kind = Kind::kHas;
      return node;
    }
    NodePtr call = Make(Kind::kCall, offset, std::move(*arguments));
    if (call) call->name = name;
    return call;
  }

  NodePtr ParseList() {
    const int offset = token_.offset;
    Advance();
    std::vector<NodePtr> elements;
    while (!token_.Is("]")) {
      if (token_.Is("?")) return Fail(token_.offset, "unsupported: optional list elements ([?x])");
      NodePtr element = ParseExpr();
      if (!element) return nullptr;
      elements.push_back(std::move(element));
      if (token_.Is(",")) {
        Advance();
      } else if (!token_.Is("]")) {
        return Fail(token_.offset, "expected ',' or ']' but found " + DescribeToken(token_));
      }
    }
    Advance();
    return Make(Kind::kList, offset, std::move(elements));
  }

  NodePtr ParseMap() {
    const int offset = token_.offset;
    Advance();
    std::vector<NodePtr> entries;
    while (!token_.Is("}")) {
      if (token_.Is("?")) return Fail(token_.offset, "unsupported: optional map entries ({?k: v})");
      NodePtr key = ParseExpr();
      if (!key || !Expect(":")) return nullptr;
      NodePtr value = ParseExpr();
      if (!value) return nullptr;
      entries.push_back(std::move(key));
      entries.push_back(std::move(value));
      if (token_.Is(",")) {
        Advance();
      } else if (!token_.Is("}")) {
        return Fail(token_.offset, "expected ',' or '}' but found " + DescribeToken(token_));
      }
    }
    Advance();
    return Make(Kind::kMap, offset, std::move(entries));
  }

  Lexer lexer_;
  Token token_;
  std::optional<std::pair<int, std::string>> error_;
  int nesting_ = 0;
};

}  // namespace

Result<std::shared_ptr<const Ast>> Parse(std::string_view text) {
  auto ast = std::make_shared<Ast>();
  ast->text = std::string(text);
  Parser parser(ast->text);
  NodePtr root = parser.ParseAll();
  if (parser.error() || !root) {
    const auto& [offset, message] =
        parser.error() ? *parser.error() : std::pair<int, std::string>(0, "parse error");
    return Error{ErrorCode::kParse, message, ast->PositionOf(offset)};
  }
  ast->root = std::move(root);
  return std::shared_ptr<const Ast>(std::move(ast));
}

}  // namespace ruleplane::expr
