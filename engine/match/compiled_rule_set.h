// CompiledRuleSet: a rule set compiled for matching. Compile once, evaluate
// many snapshots, from any number of threads: the object is immutable.
//
//   auto compiled = CompiledRuleSet::Compile(rule_set);
//   auto decision = (*compiled)->Evaluate(snapshot, {});
//   for (int rule : decision->selected) ...
//
// Evaluation has two stages. DeriveFacts fills a frame: params (defaults, then
// the snapshot's params, then explicit overrides), the snapshot, `now` and
// every fact in order. Match then decides which rules hold: literal cells
// (constants, constant ranges and sets, booleans) are looked up in a
// per-column index that yields, for the fact's value, the bitset of rules the
// value satisfies; matching intersects those bitsets and evaluates only the
// remaining non-literal cells and conditions of the surviving rules.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/snapshot.h"
#include "engine/expr/budget.h"
#include "engine/expr/expression.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane {

using ParamOverrides = std::vector<std::pair<std::string, Value>>;

struct CellTrace {
  int fact = -1;     // column; -1 for the rule's condition
  std::string text;  // the cell or condition as written
  SourcePosition position;
  Value fact_value;  // the value the cell saw (null for a condition)
  bool passed = false;
  std::string error;  // when the cell could not be evaluated
};

struct RuleTrace {
  int rule = -1;
  bool matched = false;
  std::vector<CellTrace> cells;  // every non-"-" cell, then the condition
};

struct Decision {
  std::vector<int> matched;        // every rule whose cells and condition hold, in rule order
  std::vector<int> selected;       // what the hit policy selects, in output order
  std::optional<Error> violation;  // UNIQUE / ANY violation (then `selected` is empty)
  std::vector<RuleTrace> trace;    // one per rule, when requested
  bool applies = true;             // false: spec.appliesWhen did not hold, nothing was matched
};

struct EvaluationOptions {
  ParamOverrides param_overrides;  // applied after the snapshot's params
  bool trace = false;
  int64_t budget = expr::Budget::kDefaultLimit;  // per rule set and snapshot (expr::Budget)
};

class CompiledRuleSet {
 public:
  static Result<std::shared_ptr<const CompiledRuleSet>> Compile(std::shared_ptr<const RuleSet> rule_set);
  ~CompiledRuleSet();

  const RuleSet& rule_set() const { return *rule_set_; }
  const FrameLayout& layout() const { return layout_; }
  // Slots a frame needs, scratch space included.
  int frame_size() const { return frame_size_; }

  // Errors: kInvalidArgument for a param override of the wrong type or an
  // unknown param; kInvalidSnapshot for a fact that cannot be derived, naming
  // the fact, the rule file and the failing expression's message, and for a
  // fact whose value is outside its declared domain (unless the fact says
  // `outsideDomain: plan`), naming the value and the domain. The facts' work
  // counts against `budget` (a default budget of its own when none is given).
  Result<expr::Frame> DeriveFacts(const Snapshot& snapshot, const ParamOverrides& overrides,
                                  expr::Budget* budget = nullptr) const;

  // Whether spec.appliesWhen holds for the snapshot (true when the rule set
  // has none). kInvalidSnapshot when it cannot be evaluated or is not a bool.
  // A rule set that does not apply decides nothing: callers neither derive
  // its facts nor match it.
  Result<bool> AppliesTo(const Snapshot& snapshot, const ParamOverrides& overrides,
                         expr::Budget* budget = nullptr) const;

  // Matches a frame filled by DeriveFacts (or by hand: facts and params only
  // are read by cells that do not name `snapshot`). An error evaluating a
  // non-literal cell or condition is an error of the whole match, naming the
  // rule and the cell. A rule's cells and condition combine as CEL's &&: a
  // false one decides the rule even when another cannot be evaluated, so the
  // order of evaluation never matters; the error reported is that of the
  // first such rule, and its first failing cell in the order written.
  Result<Decision> Match(expr::Frame& frame, bool trace = false, expr::Budget* budget = nullptr) const;

  // Match without a trace, refilling `decision`: its vectors keep their
  // capacity, so that a caller matching in a loop allocates nothing. Returns
  // the error Match would return, or nullopt.
  std::optional<Error> Match(expr::Frame& frame, Decision& decision, expr::Budget* budget = nullptr) const;

  // AppliesTo, then DeriveFacts and Match.
  Result<Decision> Evaluate(const Snapshot& snapshot, const EvaluationOptions& options) const;

 private:
  struct Index;
  CompiledRuleSet() = default;
  // A frame with the params, the snapshot and `now` bound, facts not yet derived.
  Result<expr::Frame> BindInputs(const Snapshot& snapshot, const ParamOverrides& overrides) const;
  Result<Decision> MatchWithTrace(expr::Frame& frame, expr::Budget* budget) const;
  std::shared_ptr<const RuleSet> rule_set_;
  FrameLayout layout_;
  int frame_size_ = 0;
  std::unique_ptr<const Index> index_;
};

// Converts a param value given as text (--param k=v) or as a snapshot/JSON
// value to the param's declared type.
Result<Value> ConvertParam(const Param& param, const Value& given);

}  // namespace ruleplane
