// Verify: `ruleplane verify` for one rule set. It enumerates every fact
// vector of the declared domains that satisfies the constraints
// (DomainEnumerator) and reports, each with the regions of states it holds
// and an example state per region:
//   gaps               states no rule matches (warnings with `allowGaps: true`);
//   conflicts          UNIQUE: several rules match; ANY: rules with different actions match;
//   overlaps           COLLECT: rules with different actions match together (warnings);
//   invariant failures states where an invariant is false;
//   dead rules         rules that match no state;
//   masked rules       rules that match but are never selected, with the rules selected instead;
//   evaluation errors  states where a fact, bound, constraint, cell or invariant cannot be evaluated;
//   unverifiable       expressions verification cannot evaluate (VerificationModel problems).
//
//   VerificationReport report = Verify(compiled, {});
//   std::cout << FormatVerificationReport(report, 3);
#pragma once

#include <memory>

#include "engine/match/compiled_rule_set.h"
#include "engine/verify/verification_report.h"

namespace ruleplane {

// `overrides`: param values instead of the defaults (names the rule set does
// not declare are ignored).
VerificationReport Verify(const std::shared_ptr<const CompiledRuleSet>& compiled,
                          const ParamOverrides& overrides);

// A text equal for two rules exactly when their `then` is the same.
std::string ActionsSignature(const Rule& rule);

// "'a'", "'a' and 'b'", "'a', 'b' and 'c'".
std::string QuotedRuleIds(const RuleSet& rule_set, const std::vector<int>& rules);

}  // namespace ruleplane
