// ReferenceEvaluator: a deliberately naive matcher that CompiledRuleSet is
// checked against (as RE2's tests check every engine against a slow one).
//
// It works straight from the RuleSet model: each cell becomes the text of a
// full boolean CEL expression (`ready > (n)`, `(f >= (0)) && (f < (n))`,
// `role in (["a"])`), compiled with expr::Compile and evaluated row by row,
// every cell of every rule, with no index. A rule matches when no cell or
// condition is false and none is an error or a non-bool; a rule with an error
// and no false cell makes the whole evaluation an error. The hit policy is
// applied by the plainest code that states it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/error.h"
#include "engine/expr/expression.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane::testing {

class ReferenceEvaluator {
 public:
  struct Outcome {
    std::vector<int> matched;
    std::vector<int> selected;
    bool violation = false;
    std::optional<std::string> error_rule;  // id of the first rule that could not be evaluated
    std::string error;
  };

  static Result<ReferenceEvaluator> Build(std::shared_ptr<const RuleSet> rule_set);

  // `frame` holds the facts, params, snapshot and now (FrameLayout).
  Outcome Evaluate(const std::vector<Value>& frame) const;

  // The full boolean text the reference compiles for one cell.
  static std::string CellExpressionText(const RuleSet& rule_set, const Cell& cell);

 private:
  struct RuleConjuncts {
    std::vector<std::string> texts;
    std::vector<std::shared_ptr<const expr::Program>> programs;
  };

  std::shared_ptr<const RuleSet> rule_set_;
  std::vector<RuleConjuncts> rules_;
  int fixed_slots_ = 0;
  int frame_size_ = 0;
};

}  // namespace ruleplane::testing
