#include "engine/verify/rule_test_runner.h"

#include <string>

#include "engine/common/json_value.h"
#include "engine/common/snapshot.h"
#include "engine/plan/plan.h"

namespace ruleplane {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text + "]";
}

std::string StepText(const std::string& action, const std::string& target, const Value* params) {
  std::string text = action + "(" + target + ")";
  if (params != nullptr) text += " " + params->DebugString();
  return text;
}

// The first difference between the expected and the planned steps, or "".
std::string CompareSteps(const std::vector<ExpectedStep>& expected, const std::vector<PlanStep>& actual) {
  for (size_t i = 0; i < expected.size() || i < actual.size(); ++i) {
    const std::string where = "step " + std::to_string(i + 1) + ": ";
    if (i >= actual.size()) {
      return where + "expected " + StepText(expected[i].action, expected[i].target.value_or("*"), nullptr) +
             ", but the plan has only " + std::to_string(actual.size()) + " steps";
    }
    const PlanStep& step = actual[i];
    if (i >= expected.size()) {
      return where + "unexpected " + StepText(step.action, step.target, &step.params) + " (expected " +
             std::to_string(expected.size()) + " steps)";
    }
    const ExpectedStep& want = expected[i];
    // Planned params go through JSON, as a user sees them, before comparing.
    const Value params = ValueFromJson(ValueToJson(step.params));
    const bool same = want.action == step.action && (!want.target || *want.target == step.target) &&
                      (!want.params || *want.params == params);
    if (!same) {
      return where + "expected " +
             StepText(want.action, want.target.value_or("*"), want.params ? &*want.params : nullptr) +
             ", got " + StepText(step.action, step.target, &params);
    }
  }
  return "";
}

}  // namespace

RuleTestOutcome RunRuleTest(const std::shared_ptr<const CompiledRuleSet>& compiled, const RuleTest& test,
                            const ActionCatalogue* catalogue, const SnapshotReader& read_snapshot,
                            TestCoverage* coverage) {
  RuleTestOutcome outcome{test.name, false, ""};
  Result<Snapshot> snapshot = Error{ErrorCode::kInternal, "no snapshot", {}};
  if (test.snapshot) {
    snapshot = SnapshotFromValue(*test.snapshot);
  } else {
    auto text = read_snapshot(test.snapshot_file);
    if (!text.ok()) {
      outcome.failure = "cannot read snapshotFile '" + test.snapshot_file + "': " + text.error().message;
      return outcome;
    }
    snapshot = ParseSnapshot(*text);
  }
  if (!snapshot.ok()) {
    outcome.failure = snapshot.error().message;
    return outcome;
  }

  EvaluationOptions options;
  options.param_overrides = test.params;
  if (coverage != nullptr) {
    EvaluationOptions traced = options;
    traced.trace = true;
    if (auto decision = compiled->Evaluate(*snapshot, traced); decision.ok()) coverage->Record(*decision);
  }
  auto plan = MakePlan({compiled}, *snapshot, options, catalogue);
  std::string error;
  if (!plan.ok()) {
    error = plan.error().message;
  } else if (plan->rule_sets.front().error) {
    error = plan->rule_sets.front().error->message;
  } else if (plan->rule_sets.front().violation) {
    error = plan->rule_sets.front().violation->message;
  }
  if (test.expect_error) {
    if (error.empty()) {
      outcome.failure = "expected an error containing '" + *test.expect_error + "', got none";
    } else if (error.find(*test.expect_error) == std::string::npos) {
      outcome.failure = "expected an error containing '" + *test.expect_error + "', got: " + error;
    }
    outcome.passed = outcome.failure.empty();
    return outcome;
  }
  if (!error.empty()) {
    outcome.failure = "unexpected error: " + error;
    return outcome;
  }
  const std::vector<std::string>& rules = plan->rule_sets.front().matched_rules;
  if (test.expect_rules && *test.expect_rules != rules) {
    outcome.failure = "expected rules " + Join(*test.expect_rules) + ", got " + Join(rules);
  } else if (test.expect_steps) {
    outcome.failure = CompareSteps(*test.expect_steps, plan->steps);
  }
  outcome.passed = outcome.failure.empty();
  return outcome;
}

}  // namespace ruleplane
