// The invariants of a rule set (the properties `verify` proves over the
// declared domains), checked again on one real plan before it is executed:
// the domains are bounded, a live snapshot may not be, and a plan is only
// run when every invariant of every rule set it came from holds for it.
#pragma once

#include <string>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/snapshot.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/plan/plan.h"

namespace ruleplane {

struct InvariantViolation {
  std::string rule_set;   // name@version
  std::string invariant;  // as written
  SourcePosition position;
  std::string error;  // when the invariant could not be evaluated (a violation too)
};

// Evaluates each invariant of `compiled` with the facts of `snapshot` and the
// decision of `plan` for that rule set (`rules`: its matched rules,
// `actions` and `steps`: its steps, with their evaluated targets and params).
// An invariant that is false or not a bool is a violation.
Result<std::vector<InvariantViolation>> CheckPlanInvariants(const CompiledRuleSet& compiled,
                                                            const Snapshot& snapshot, const Plan& plan,
                                                            const EvaluationOptions& options);

}  // namespace ruleplane
