// VerificationModel: what `ruleplane verify` can see of a rule set.
//
// Verification enumerates fact values, never snapshots. Every fact is
//   an input       its expression reads the snapshot (or `now`), or params
//                  only, and it declares a domain: its values are enumerated;
//   derived        its expression reads only params and facts that are inputs
//                  or derived: it is computed from them (`quorate: 2 * r > n`);
//   unavailable    neither: verification cannot know its value.
// Cells, conditions, constraints, invariants and domain bounds must read only
// inputs, derived facts and params (invariants also the decision). Each one
// that does not is a problem: a warning for lint (for tables that opt into
// verification by declaring a domain, a constraint or an invariant), an error
// for verify.
//
//   VerificationModel model = AnalyzeForVerification(rule_set);
//   if (model.roles[f] == VerificationModel::Role::kInput && model.used[f]) ...
#pragma once

#include <vector>

#include "engine/expr/expression.h"
#include "engine/rule_file/diagnostics.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane {

struct VerificationModel {
  enum class Role { kInput, kDerived, kUnavailable };

  std::vector<Role> roles;  // per fact
  // Per fact: verification needs its value (a cell, condition, constraint,
  // invariant, domain bound or needed derived fact reads it).
  std::vector<bool> used;
  // Per fact: only `==`/`<`/range/`in` cells of its own column read it, so
  // values that every such cell treats alike can be enumerated as one.
  std::vector<bool> only_column_cells;
  bool opted_in = false;
  // An invariant reads `steps`: action targets and params that need no
  // snapshot are then evaluated, and the facts they read are used.
  bool steps_read = false;
  Diagnostics problems;  // warnings, in file order (also when !opted_in)

  // Whether `program` reads only params, inputs and derived facts (and,
  // when `decision`, the invariant decision slots).
  bool CanEvaluate(const expr::Program& program, const FrameLayout& layout, bool decision) const;
};

VerificationModel AnalyzeForVerification(const RuleSet& rule_set);

}  // namespace ruleplane
