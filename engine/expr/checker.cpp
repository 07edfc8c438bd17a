// expr::Check: resolves names to frame slots and calls to function overloads,
// validates and prepares constant arguments (regular expressions, cron
// schedules) and folds constant sub-expressions.
#include <algorithm>
#include <climits>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/expr/ast.h"
#include "engine/expr/budget.h"
#include "engine/expr/expression.h"
#include "engine/expr/functions.h"
#include "engine/expr/int_code.h"
#include "engine/expr/program_node.h"

namespace ruleplane::expr {
namespace {

using NodePtr = std::unique_ptr<Node>;

// The offset of the first character of a sub-expression (binary nodes record
// their operator's).
int StartOffset(const AstNode& node) {
  int offset = node.offset;
  for (const auto& child : node.children) offset = std::min(offset, StartOffset(*child));
  return offset;
}

// A built sub-tree and what it reads, to decide whether it is constant.
struct Built {
  NodePtr node;
  bool reads_declared = false;   // reads a slot of the Environment
  int lowest_scratch = INT_MAX;  // lowest comprehension variable slot it reads
};

class Checker {
 public:
  Checker(const Ast& ast, const Environment& env, const Limits& limits, Budget& fold_budget)
      : ast_(ast),
        env_(env),
        limits_(limits),
        fold_budget_(fold_budget),
        first_free_(env.first_free_slot()) {}

  std::optional<Built> Build(const AstNode& ast_node) {
    const int scratch_base = first_free_ + scratch_in_use_;
    std::optional<Built> built = BuildNode(ast_node);
    if (!built) return std::nullopt;
    if (built->node->kind != Node::Kind::kConstant && built->node->kind != Node::Kind::kSlot &&
        !built->reads_declared && built->lowest_scratch >= scratch_base && !fold_budget_.exhausted()) {
      // The expression that exhausts the budget fails; with a budget shared by
      // many expressions, the later ones are left unfolded.
      Fold(*built->node);
      if (fold_budget_.exhausted()) return Fail(ast_node, "constant folding: " + fold_budget_.Message());
    }
    return built;
  }

  const std::optional<Error>& error() const { return error_; }
  const std::set<int>& referenced_slots() const { return referenced_; }
  int scratch_slots() const { return max_scratch_; }

 private:
  std::nullopt_t Fail(const AstNode& at, std::string message) {
    return FailAt(at.offset, std::move(message));
  }

  std::nullopt_t FailAt(int offset, std::string message) {
    if (!error_) error_ = Error{ErrorCode::kCheck, std::move(message), ast_.PositionOf(offset)};
    return std::nullopt;
  }

  // Builds the children of `ast_node` into `built`, merging what they read.
  bool BuildChildren(const AstNode& ast_node, Built& built, size_t first = 0) {
    for (size_t i = first; i < ast_node.children.size(); ++i) {
      if (!AddChild(*ast_node.children[i], built)) return false;
    }
    return true;
  }

  bool AddChild(const AstNode& child, Built& built) {
    std::optional<Built> built_child = Build(child);
    if (!built_child) return false;
    built.reads_declared |= built_child->reads_declared;
    built.lowest_scratch = std::min(built.lowest_scratch, built_child->lowest_scratch);
    built.node->children.push_back(std::move(built_child->node));
    return true;
  }

  static Built Make(Node::Kind kind) {
    Built built;
    built.node = std::make_unique<Node>(kind);
    return built;
  }

  std::optional<Built> BuildNode(const AstNode& ast_node) {
    using AstKind = AstNode::Kind;
    switch (ast_node.kind) {
      case AstKind::kLiteral: {
        Built built = Make(Node::Kind::kConstant);
        built.node->value = ast_node.literal;
        return built;
      }
      case AstKind::kIdent:
        return BuildIdent(ast_node);
      case AstKind::kSelect:
      case AstKind::kHas: {
        if (ast_node.kind == AstKind::kSelect) {
          if (const std::optional<std::string> name = QualifiedName(ast_node)) {
            if (const int slot = env_.Lookup(*name); slot >= 0) return BuildDeclared(slot);
          }
        }
        Built built = Make(ast_node.kind == AstKind::kHas ? Node::Kind::kHas : Node::Kind::kSelect);
        built.node->field = ast_node.name;
        if (!BuildChildren(ast_node, built)) return std::nullopt;
        return built;
      }
      case AstKind::kCall:
        return BuildCall(ast_node);
      case AstKind::kComprehension:
        return BuildComprehension(ast_node);
      case AstKind::kIndex:
      case AstKind::kList:
      case AstKind::kMap:
      case AstKind::kUnary:
      case AstKind::kBinary:
      case AstKind::kAnd:
      case AstKind::kOr:
      case AstKind::kConditional: {
        Built built = Make(SimpleKind(ast_node.kind));
        built.node->op = ast_node.op;
        if (!BuildChildren(ast_node, built)) return std::nullopt;
        return built;
      }
    }
    return Fail(ast_node, "internal error: unknown syntax node");
  }

  static Node::Kind SimpleKind(AstNode::Kind kind) {
    switch (kind) {
      case AstNode::Kind::kIndex:
        return Node::Kind::kIndex;
      case AstNode::Kind::kList:
        return Node::Kind::kList;
      case AstNode::Kind::kMap:
        return Node::Kind::kMap;
      case AstNode::Kind::kUnary:
        return Node::Kind::kUnary;
      case AstNode::Kind::kBinary:
        return Node::Kind::kBinary;
      case AstNode::Kind::kAnd:
        return Node::Kind::kAnd;
      case AstNode::Kind::kOr:
        return Node::Kind::kOr;
      default:
        return Node::Kind::kConditional;
    }
  }

  std::optional<Built> BuildIdent(const AstNode& ast_node) {
    Built built = Make(Node::Kind::kSlot);
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->first == ast_node.name) {
        built.node->slot = it->second;
        built.lowest_scratch = it->second;
        return built;
      }
    }
    const int slot = env_.Lookup(ast_node.name);
    if (slot < 0) return Fail(ast_node, "undeclared reference to '" + ast_node.name + "'");
    return BuildDeclared(slot);
  }

  Built BuildDeclared(int slot) {
    Built built = Make(Node::Kind::kSlot);
    built.node->slot = slot;
    built.reads_declared = true;
    referenced_.insert(slot);
    return built;
  }

  // "a.b.c" for the selection a.b.c whose root names no comprehension
  // variable: CEL's qualified names, where the longest declared prefix of
  // a.b.c is the variable (a JSON input's key "a.b" is one).
  std::optional<std::string> QualifiedName(const AstNode& ast_node) const {
    if (ast_node.kind == AstNode::Kind::kIdent) {
      for (const auto& scope : scopes_) {
        if (scope.first == ast_node.name) return std::nullopt;
      }
      return ast_node.name;
    }
    if (ast_node.kind != AstNode::Kind::kSelect) return std::nullopt;
    std::optional<std::string> prefix = QualifiedName(*ast_node.children[0]);
    if (prefix) *prefix += "." + ast_node.name;
    return prefix;
  }

  // `lists.range(n)`: a function of an extension's namespace, written like a
  // method of an identifier that names no variable.
  bool IsNamespacedCall(const AstNode& ast_node) const {
    if (!ast_node.receiver_style) return false;
    const AstNode& receiver = *ast_node.children[0];
    if (receiver.kind != AstNode::Kind::kIdent || env_.Lookup(receiver.name) >= 0) return false;
    for (const auto& scope : scopes_) {
      if (scope.first == receiver.name) return false;
    }
    return !FindOverloads(receiver.name + "." + ast_node.name).empty();
  }

  std::optional<Built> BuildCall(const AstNode& ast_node) {
    const bool namespaced = IsNamespacedCall(ast_node);
    const std::string name = namespaced ? ast_node.children[0]->name + "." + ast_node.name : ast_node.name;
    const bool receiver_style = ast_node.receiver_style && !namespaced;
    const size_t first_argument = namespaced ? 1 : 0;
    const std::span<const FunctionSignature> overloads = FindOverloads(name);
    if (overloads.empty()) return Fail(ast_node, "unsupported: function '" + name + "'");
    if (receiver_style && !overloads.front().receiver_style) {
      return Fail(ast_node, "unsupported: '" + name + "' as a method; write " + name + "(x)");
    }
    if (!receiver_style && !overloads.front().global_style) {
      return Fail(ast_node, "unsupported: '" + name + "' as a global function; write x." + name + "(...)");
    }
    const int given = static_cast<int>(ast_node.children.size() - first_argument);
    const auto chosen = std::find_if(overloads.begin(), overloads.end(),
                                     [given](const FunctionSignature& f) { return f.arguments == given; });
    if (chosen == overloads.end()) {
      const int receiver = receiver_style ? 1 : 0;
      return Fail(ast_node, "wrong number of arguments to '" + name + "': expected " +
                                ExpectedCounts(overloads, receiver) + ", got " +
                                std::to_string(given - receiver));
    }
    Built built = Make(Node::Kind::kCall);
    built.node->function = &*chosen;
    if (!BuildChildren(ast_node, built, first_argument)) return std::nullopt;
    if (std::optional<ArgumentError> error = PrepareCall(*built.node, limits_)) {
      return FailAt(StartOffset(*ast_node.children[error->argument + first_argument]),
                    std::move(error->message));
    }
    return built;
  }

  // "1", "1 or 2", "0, 1 or 2": the argument counts the overloads take.
  static std::string ExpectedCounts(std::span<const FunctionSignature> overloads, int receiver) {
    std::string text;
    for (size_t i = 0; i < overloads.size(); ++i) {
      if (i > 0) text += i + 1 == overloads.size() ? " or " : ", ";
      text += std::to_string(overloads[i].arguments - receiver);
    }
    return text;
  }

  std::optional<Built> BuildComprehension(const AstNode& ast_node) {
    if (ast_node.name == ast_node.second_name) {
      return Fail(ast_node, "the variables of '" + std::string(MacroName(ast_node.macro)) +
                                "' must have different names");
    }
    const int saved_in_use = scratch_in_use_;
    Built built = Make(Node::Kind::kComprehension);
    built.node->macro = ast_node.macro;
    built.node->slot = first_free_ + scratch_in_use_++;
    if (!ast_node.second_name.empty()) built.node->second_slot = first_free_ + scratch_in_use_++;
    max_scratch_ = std::max(max_scratch_, scratch_in_use_);
    if (!AddChild(*ast_node.children[0], built)) return std::nullopt;
    scopes_.emplace_back(ast_node.name, built.node->slot);
    if (!ast_node.second_name.empty()) scopes_.emplace_back(ast_node.second_name, built.node->second_slot);
    if (!BuildChildren(ast_node, built, 1)) return std::nullopt;
    scopes_.resize(scopes_.size() - (ast_node.second_name.empty() ? 1 : 2));
    scratch_in_use_ = saved_in_use;
    // The loop variables are bound here, so they do not make this node variable.
    if (built.lowest_scratch >= built.node->slot) built.lowest_scratch = INT_MAX;
    return built;
  }

  // Replaces a sub-tree that reads no outside slot by its value, unless it
  // evaluates to an error (which must then happen at evaluation time).
  void Fold(Node& node) {
    fold_frame_.resize(std::max<size_t>(fold_frame_.size(), first_free_ + max_scratch_));
    Value value = EvaluateNode(node, fold_frame_, limits_, &fold_budget_);
    if (value.is_error()) return;
    node.kind = Node::Kind::kConstant;
    node.value = std::move(value);
    node.children.clear();
    node.regex.reset();
    node.schedule.reset();
  }

  const Ast& ast_;
  const Environment& env_;
  const Limits& limits_;
  Budget& fold_budget_;
  const int first_free_;
  std::vector<std::pair<std::string, int>> scopes_;  // comprehension variables, innermost last
  int scratch_in_use_ = 0;
  int max_scratch_ = 0;
  std::set<int> referenced_;
  std::optional<Error> error_;
  Frame fold_frame_;
};

}  // namespace

Result<std::shared_ptr<const Program>> Check(const Ast& ast, const Environment& env, const Limits& limits,
                                             Budget* fold_budget) {
  if (!ast.root) return Error{ErrorCode::kInternal, "Check called with an empty Ast", {}};
  Budget own;
  Checker checker(ast, env, limits, fold_budget != nullptr ? *fold_budget : own);
  std::optional<Built> built = checker.Build(*ast.root);
  if (!built) return *checker.error();

  std::shared_ptr<Program> program(new Program());
  program->referenced_slots_.assign(checker.referenced_slots().begin(), checker.referenced_slots().end());
  int highest_declared = -1;
  for (const auto& [name, slot] : env.names()) highest_declared = std::max(highest_declared, slot);
  program->frame_size_ = std::max(highest_declared + 1, env.first_free_slot() + checker.scratch_slots());
  if (built->node->kind == Node::Kind::kConstant) program->constant_ = built->node->value;
  program->int_code_ = IntCode::Compile(*built->node);
  program->root_ = std::move(built->node);
  program->limits_ = limits;
  return std::shared_ptr<const Program>(std::move(program));
}

}  // namespace ruleplane::expr
