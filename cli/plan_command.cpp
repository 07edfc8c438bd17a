// ruleplane plan: the steps the rules decide for a snapshot. Changes nothing.
#include <algorithm>
#include <ostream>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "cli/plan_batch.h"
#include "cli/snapshot_input.h"
#include "engine/common/json_value.h"
#include "engine/plan/plan.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kPlanUsage =
    R"(usage: ruleplane plan [--rules PATH|NAME@VERSION]... [--param NAME=VALUE]... [--budget N] SNAPSHOT.json [-o table|json|yaml]
       ruleplane plan [--rules PATH|NAME@VERSION]... [--param NAME=VALUE]... --cluster NAMESPACE/NAME
                      [--kubeconfig FILE] [--context NAME] [-o table|json|yaml]
       ruleplane plan [--rules PATH|NAME@VERSION]... [--param NAME=VALUE]... --batch SNAPSHOTS.jsonl

--cluster observes the Etcd object and what it owns on the API server
(ruleplane observe cluster prints that snapshot) and plans it. Reads only.

--budget N bounds the work of evaluating each rule set (macro iterations,
elements and bytes built, regular-expression steps; default 10000000): a rule
set that needs more gets an error, the others are planned.

Evaluates the snapshot ("-" reads standard input) against every rule file whose
spec.subject matches the snapshot's kind (the newest version of each rule-set
name; the bundled rule files unless --rules is given) and prints the plan.
Nothing is changed.

The plan format (-o json / -o yaml):
  apiVersion: ruleplane.dev/v1
  kind: Plan
  snapshot:   {kind, digest: "sha256:...", observedAt}   what was evaluated
  ruleSets:   - {name, version, digest: "sha256:<rule file>", hitPolicy,
                 matchedRules: [rule ids the hit policy selected, in order],
                 violation: "<message>" (only on a UNIQUE/ANY violation),
                 error: "<message>" (only when the rule set could not be
                        evaluated: no decision and no steps from it; the
                        other rule sets are planned all the same)}
  steps:      - id:             "<rule set>/<rule>/<n>"
                ruleSet:        "<name>@<version>"
                rule:           the rule that asked for the step
                action:         an action of the catalogue (actions/catalogue.yaml)
                target:         what the step acts on (a member, a pod, ...)
                params:         the action's parameters, evaluated
                disruptive:     whether the action can reduce availability
                adapter:        kubernetes | etcd | local
                dependsOn:      [the step that must complete first]
                idempotencyKey: "sha256:..." of rule set name, action, target and
                                params: the same step decided again has the same key
Steps are ordered: rule sets by name, then rules in hit-policy order, then each
rule's actions (forEach expanded) in the order written.

--batch plans one snapshot per line, one JSON line each (ruleplane plan
--batch --help tells more).

Exit codes: 0 a plan, 1 a hit-policy violation or an evaluation error,
2 bad usage or an unreadable or malformed snapshot.
)";

}  // namespace

int RunPlan(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  const auto options_end = std::find(args.begin(), args.end(), "--");
  const bool batch = std::any_of(args.begin(), options_end, [](const std::string& arg) {
    return arg == "--batch" || arg.starts_with("--batch=");
  });
  if (batch) return RunPlanBatch(args, in, out, err);
  if (HelpRequested(args)) return PrintUsage(kPlanUsage, out);
  auto parsed = ParseEvaluationArgs(args, {"-o", "--cluster", "--kubeconfig", "--context"}, kPlanUsage, err);
  if (!parsed) return kExitUsage;
  int exit_code = kExitOk;
  auto input = LoadEvaluationInput(*parsed, in, err, exit_code);
  if (!input) return exit_code;

  EvaluationOptions options;
  options.param_overrides = input->overrides;
  options.budget = parsed->budget;
  auto plan = MakePlan(input->rule_sets, input->snapshot, options, input->library->catalogue.get());
  if (!plan.ok()) {
    err << "ruleplane: " << parsed->snapshot_path << ": " << plan.error().message << "\n";
    return plan.error().code == ErrorCode::kInvalidSnapshot ||
                   plan.error().code == ErrorCode::kInvalidArgument
               ? kExitUsage
               : kExitFinding;
  }
  for (const PlannedRuleSet& planned : plan->rule_sets) {
    if (planned.error) {
      err << "ruleplane: " << parsed->snapshot_path << ": rule set " << planned.name << "@" << planned.version
          << ": " << planned.error->message << "\n";
    }
  }
  if (parsed->output == "json") {
    out << FormatJson(PlanToValue(*plan), 2) << "\n";
  } else if (parsed->output == "yaml") {
    out << FormatYaml(PlanToValue(*plan));
  } else {
    out << FormatPlanTable(*plan);
  }
  return plan->has_violation() || plan->has_error() ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
