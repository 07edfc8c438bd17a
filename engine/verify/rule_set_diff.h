// DiffRuleSets: where two rule sets (typically two versions of one decision
// table) decide differently. Both are evaluated on every fact vector of the
// domains they share (DomainEnumerator: a fact both enumerate takes the
// values both domains allow; a fact only one of them reads takes that one's
// domain), and each difference comes out as a finding
//   changed: old selects 'quorum-lost', new selects 'quorum-lost-backup-not-ready'
// with its regions and an example state per region. Two decisions are the
// same when they select the same rule ids, in the same order, with the same
// actions (action names, targets and params as written). The 20 largest
// differences are listed, the rest summed up.
//
//   VerificationReport report = DiffRuleSets(old_compiled, new_compiled, {});
//   std::cout << FormatVerificationReport(report, 3);
#pragma once

#include <cstdint>
#include <memory>

#include "engine/match/compiled_rule_set.h"
#include "engine/verify/verification_report.h"

namespace ruleplane {

// `max_evaluations` bounds the work (0: none): two versions with different
// fact models span the product of both domains. The report then says it is
// incomplete.
VerificationReport DiffRuleSets(const std::shared_ptr<const CompiledRuleSet>& old_rules,
                                const std::shared_ptr<const CompiledRuleSet>& new_rules,
                                const ParamOverrides& overrides, uint64_t max_evaluations = 0);

}  // namespace ruleplane
