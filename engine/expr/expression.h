// Expressions: a subset of CEL, in three separate stages.
//
//   1. Parse:  text -> Ast (syntax only; every node carries its offset).
//   2. Check:  Ast + Environment -> Program (names resolved to frame slots,
//              functions resolved, regular expressions compiled, constants folded).
//   3. Evaluate: Program + Frame -> Value (no parsing, no name lookup).
//
//   expr::Environment env;
//   env.Declare("ready", 0);
//   env.Declare("n", 1);
//   auto ast = expr::Parse("2 * ready > n");
//   auto program = expr::Check(**ast, env);
//   expr::Frame frame(program->frame_size());
//   frame[0] = Value::Int(2);
//   frame[1] = Value::Int(3);
//   Value v = program->Evaluate(frame);   // true
//
// A Program is immutable and safe to evaluate from many threads at once, each
// with its own Frame. Evaluation errors are returned as Values of kind kError.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane::expr {

struct Ast;     // the parse tree (engine/ast.h, internal)
struct Node;    // the checked, evaluable tree (internal)
class IntCode;  // its integer fast path (internal)

// Parses CEL source. On failure the Error's position has line/column within
// `text` (1-based), and its message names what was expected or which
// construct is unsupported (e.g. "unsupported: uint literals").
Result<std::shared_ptr<const Ast>> Parse(std::string_view text);

// The names an expression may use, each bound to a slot of the Frame.
class Environment {
 public:
  // Later declarations of the same name shadow earlier ones.
  void Declare(std::string name, int slot);
  // Slot of `name`, or -1.
  int Lookup(std::string_view name) const;
  // The first slot that Check may use for comprehension variables
  // (defaults to one past the highest declared slot).
  int first_free_slot() const;
  void set_first_free_slot(int slot) { first_free_slot_ = slot; }
  const std::vector<std::pair<std::string, int>>& names() const { return names_; }

 private:
  std::vector<std::pair<std::string, int>> names_;
  int first_free_slot_ = -1;
};

struct Limits {
  uint32_t regex_match_limit = 100000;  // PCRE2's match limit, per match
};

class Budget;  // engine/expr/budget.h

using Frame = std::vector<Value>;

class Program {
 public:
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Evaluates against `frame`, which must have at least frame_size() slots;
  // slots at and above the environment's first free slot are scratch space.
  // The work counts against `budget`, or against a default budget of its own
  // when none is given; an exhausted budget gives its error.
  Value Evaluate(Frame& frame, Budget* budget = nullptr) const;

  // The matcher's shortcut: 1 or 0 when the program is plain int and bool
  // arithmetic that yields a bool on this frame without an error, else -1
  // (then Evaluate decides). Builds no Value.
  int QuickBool(const Frame& frame) const;
  // Whether QuickBool can ever answer.
  bool has_quick_bool() const;

  int frame_size() const { return frame_size_; }
  // Distinct declared slots the expression reads, ascending.
  const std::vector<int>& referenced_slots() const { return referenced_slots_; }
  // The value of an expression that reads no slot and evaluates without error.
  const std::optional<Value>& constant() const { return constant_; }
  // The checked tree (internal: engine/expr/program_node.h), for analyses.
  const Node& root() const { return *root_; }

 private:
  friend Result<std::shared_ptr<const Program>> Check(const Ast&, const Environment&, const Limits&, Budget*);
  Program() = default;
  std::unique_ptr<const Node> root_;
  std::unique_ptr<const IntCode> int_code_;  // when the tree is plain int/bool arithmetic
  int frame_size_ = 0;
  std::vector<int> referenced_slots_;
  std::optional<Value> constant_;
  Limits limits_;
};

// Resolves names and functions. Errors (kCheck) carry the line/column within
// the expression's text of the offending node: "undeclared reference to 'x'",
// "unsupported: function 'foo'", "invalid regular expression ...", and the
// budget's message when folding a constant part exhausts `fold_budget` (a
// default budget of its own when none is given).
Result<std::shared_ptr<const Program>> Check(const Ast& ast, const Environment& env,
                                             const Limits& limits = {}, Budget* fold_budget = nullptr);

// Parse + Check in one call, for callers that do not need the Ast.
Result<std::shared_ptr<const Program>> Compile(std::string_view text, const Environment& env,
                                               const Limits& limits = {}, Budget* fold_budget = nullptr);

}  // namespace ruleplane::expr
