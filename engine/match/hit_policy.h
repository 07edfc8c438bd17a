// HitPolicySelector: the DMN hit policies, applied to the rules that matched
// (internal to CompiledRuleSet).
//
//   UNIQUE      at most one rule may match; more is a violation.
//   ANY         several may match only if their actions are identical (same
//               action names and expression texts); selects the first.
//   FIRST       the first match in rule order.
//   PRIORITY    the match with the highest priority; ties go to the earlier rule.
//   RULE_ORDER  every match, in rule order.
//   COLLECT     every match, in rule order.
// No match selects nothing and is never a violation.
#pragma once

#include <optional>
#include <vector>

#include "engine/common/error.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane {

class HitPolicySelector {
 public:
  explicit HitPolicySelector(const RuleSet& rule_set);

  // Fills `selected`, or `violation` (then `selected` stays empty).
  // `matched` holds rule indices in rule order.
  void Select(const std::vector<int>& matched, std::vector<int>& selected,
              std::optional<Error>& violation) const;

 private:
  const RuleSet* rule_set_;
  std::vector<int> action_class_;  // rules with identical `then` share a class
};

}  // namespace ruleplane
