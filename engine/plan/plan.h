// Plan: what the evaluation of one snapshot against one or more rule sets
// asks to be done, as ordered, idempotent steps. Built by the planner from
// Decisions; rendered as JSON, YAML or a table by the CLI.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/snapshot.h"
#include "engine/common/value.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/action_catalogue.h"

namespace ruleplane {

struct PlanStep {
  std::string id;        // "<rule set>/<rule>/<n>", stable for the same decision
  std::string rule_set;  // name@version
  std::string rule;
  std::string action;
  std::string target;
  Value params;             // a map, in the order the rule wrote them
  bool disruptive = false;  // from the action catalogue
  std::string adapter;      // from the action catalogue
  std::vector<std::string> depends_on;
  std::string idempotency_key;  // "sha256:<hex>" of rule set name, action, target and params
};

struct PlannedRuleSet {
  std::string name;
  std::string version;
  std::string digest;
  std::string hit_policy;
  std::vector<std::string> matched_rules;  // selected rule ids, in output order
  std::optional<Error> violation;          // a hit-policy violation: no steps from this rule set
  std::optional<Error> error;              // an evaluation error: no decision, no steps from this rule set
  bool applies = true;                     // false: its spec.appliesWhen did not hold, no steps from it
};

struct Plan {
  std::string snapshot_kind;
  std::string snapshot_digest;
  Timestamp observed_at;
  std::vector<PlannedRuleSet> rule_sets;
  std::vector<PlanStep> steps;

  bool has_violation() const;
  bool has_error() const;
};

// Evaluates `snapshot` against every rule set (in the order given) and
// expands the selected rules' actions into steps: forEach expansion, target
// and parameters evaluated, parameter types checked against the catalogue
// (when given). A param override applies to the rule sets that declare it.
// Rule sets are independent: each has a budget of its own, and an error in
// one (a fact that cannot be derived or is outside its domain, a cell, a
// step's parameter, the budget) is that rule set's `error`, with no steps
// from it, while every other rule set is planned. Only a param override that
// does not fit its param's type is an error of the whole plan.
Result<Plan> MakePlan(const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                      const Snapshot& snapshot, const EvaluationOptions& options,
                      const ActionCatalogue* catalogue);

// The overrides that name params `rule_set` declares.
ParamOverrides OverridesDeclaredBy(const RuleSet& rule_set, const ParamOverrides& overrides);

// What the plan decides, independent of when it was observed: "sha256:<hex>"
// over its rule sets (name, version, digest) and its steps' idempotency keys,
// in order. The same decision on a later snapshot has the same digest, so an
// approval that names it holds while the decision does.
std::string PlanDigest(const Plan& plan);

// The plan as the JSON document of the plan format (kind: Plan).
Value PlanToValue(const Plan& plan);

}  // namespace ruleplane
