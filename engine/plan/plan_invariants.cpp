#include "engine/plan/plan_invariants.h"

#include <algorithm>

namespace ruleplane {

Result<std::vector<InvariantViolation>> CheckPlanInvariants(const CompiledRuleSet& compiled,
                                                            const Snapshot& snapshot, const Plan& plan,
                                                            const EvaluationOptions& options) {
  const RuleSet& rule_set = compiled.rule_set();
  std::vector<InvariantViolation> violations;
  if (rule_set.invariants.empty()) return violations;
  expr::Budget budget(options.budget);
  const ParamOverrides overrides = OverridesDeclaredBy(rule_set, options.param_overrides);
  auto applies = compiled.AppliesTo(snapshot, overrides, &budget);
  if (!applies.ok()) return applies.error();
  if (!*applies) return violations;
  auto frame = compiled.DeriveFacts(snapshot, overrides, &budget);
  if (!frame.ok()) return frame.error();

  const FrameLayout& layout = compiled.layout();
  int frame_size = std::max<int>(frame->size(), layout.invariant_fixed_slots());
  for (const Expression& invariant : rule_set.invariants) {
    if (invariant.program) frame_size = std::max(frame_size, invariant.program->frame_size());
  }
  frame->resize(frame_size);

  // The decision as the invariants see it: the same slots verify fills.
  const std::string id = rule_set.id();
  Value::List rules, actions, steps;
  for (const PlannedRuleSet& planned : plan.rule_sets) {
    if (planned.name + "@" + planned.version != id) continue;
    for (const std::string& rule : planned.matched_rules) rules.push_back(Value::String(rule));
  }
  for (const PlanStep& step : plan.steps) {
    if (step.rule_set != id) continue;
    actions.push_back(Value::String(step.action));
    steps.push_back(Value::MakeMap(
        {{Value::String("rule"), Value::String(step.rule)},
         {Value::String("action"), Value::String(step.action)},
         {Value::String("forEach"), Value::Bool(false)},
         {Value::String("target"), Value::String(step.target)},
         {Value::String("params"), step.params.is_null() ? Value::MakeMap({}) : step.params}}));
  }
  (*frame)[layout.decision_rules_slot()] = Value::MakeList(std::move(rules));
  (*frame)[layout.decision_actions_slot()] = Value::MakeList(std::move(actions));
  (*frame)[layout.decision_steps_slot()] = Value::MakeList(std::move(steps));

  for (const Expression& invariant : rule_set.invariants) {
    const Value result = invariant.program->Evaluate(*frame, &budget);
    if (result.is_bool() && result.bool_value()) continue;
    InvariantViolation violation{id, invariant.text, invariant.position, ""};
    if (result.is_error()) {
      violation.error = result.error_message();
    } else if (!result.is_bool()) {
      violation.error = std::string("not a bool but ") + result.TypeName();
    }
    violations.push_back(std::move(violation));
  }
  return violations;
}

}  // namespace ruleplane
