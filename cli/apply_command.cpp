// ruleplane apply: observe an Etcd on the API server (or take a snapshot
// file), plan, and execute the plan (controller/apply_plan.h).
#include <filesystem>
#include <iostream>

#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/read_file.h"
#include "cli/rule_library.h"
#include "controller/apply_plan.h"
#include "engine/common/json_value.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kApplyUsage = R"(usage: ruleplane apply --cluster NAMESPACE/NAME | SNAPSHOT.json
                      [--kubeconfig FILE] [--context NAME] [--rules NAME@VERSION|PATH]...
                      [--dry-run=client|server] [--allow-disruptive] [--journal FILE] [-o table|json]

Observes the Etcd object and what it owns (or reads the snapshot; the objects
are then acted on in its Etcd's namespace), plans with the etcd-druid rules,
and performs the plan's Kubernetes steps one at a time, each journaled before
it acts and after (--journal, default ruleplane-journal.db). Every write
carries the resourceVersion it was planned from: an object changed in the
meantime stops the plan (re-run to re-observe). A step already in effect is
skipped. Disruptive steps (a pod deleted, a StatefulSet scaled) run only with
--allow-disruptive, and every plan is checked against its rule sets'
invariants first.

--dry-run=client prints every request it would send and sends none;
--dry-run=server sends the writes with dryRun=All: the API server validates
them and stores nothing.

Exit codes: 0 the plan ran (or nothing was to do), 1 a step failed or was
refused, 2 bad usage or nothing to observe.
)";

}  // namespace

int RunApply(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kApplyUsage, out);
  Flags flags({{"--cluster"},
               {"--kubeconfig"},
               {"--context"},
               {"--rules"},
               {"--dry-run"},
               {"--allow-disruptive", false},
               {"--journal"},
               {"-o"}});
  if (!flags.Parse(args, err, kApplyUsage)) return kExitUsage;
  const std::string dry_run = flags.Get("--dry-run", "none");
  const std::string format = flags.Get("-o", "table");
  if (flags.Has("--cluster") == (flags.positional().size() == 1) || flags.positional().size() > 1 ||
      (dry_run != "none" && dry_run != "client" && dry_run != "server") ||
      (format != "table" && format != "json")) {
    err << kApplyUsage;
    return kExitUsage;
  }
  auto config = ResolveKubeConfig(flags.Get("--kubeconfig"), flags.Get("--context"));
  if (!config.ok()) {
    err << "ruleplane: apply: " << config.error().message << "\n";
    return kExitUsage;
  }
  Result<Snapshot> snapshot = Error{ErrorCode::kInternal, "not read", {}};
  if (flags.Has("--cluster")) {
    snapshot = ObserveClusterSnapshot(
        {flags.Get("--kubeconfig"), flags.Get("--context"), flags.Get("--cluster"), ""});
  } else {
    auto text = ReadFile(flags.positional()[0]);
    snapshot = text.ok() ? ParseSnapshot(*text) : Result<Snapshot>(text.error());
  }
  if (!snapshot.ok()) {
    err << "ruleplane: apply: " << snapshot.error().message << "\n";
    return kExitUsage;
  }
  if (snapshot->subject() != "EtcdCluster") {
    err << "ruleplane: apply acts on EtcdClusterSnapshots (member-init acts on a member)\n";
    return kExitUsage;
  }

  std::vector<std::string> references = flags.GetList("--rules");
  const bool rules_given = !references.empty();
  if (!rules_given) references = DefaultRuleReferences();
  auto library = LoadRuleLibrary(references, err);
  if (!library || PrintDiagnostics(*library, err) > 0) return kExitUsage;
  auto rule_sets = SelectForSubject(*library, snapshot->subject(), err);
  auto plan = MakePlan(rule_sets, *snapshot, {}, library->catalogue.get());
  if (!plan.ok()) {
    err << "ruleplane: apply: " << plan.error().message << "\n";
    return kExitFinding;
  }
  auto journal = Journal::Open(flags.Get("--journal", "ruleplane-journal.db"));
  if (!journal.ok()) {
    err << "ruleplane: apply: " << journal.error().message << "\n";
    return kExitUsage;
  }

  ApplyOptions options;
  options.dry_run = dry_run == "client"   ? ApplyOptions::DryRun::kClient
                    : dry_run == "server" ? ApplyOptions::DryRun::kServer
                                          : ApplyOptions::DryRun::kNone;
  options.allow_disruptive = flags.Has("--allow-disruptive");
  options.member_init_rules = MemberInitReferences(*library, rules_given);
  const ExecutionReport report = ApplyPlan(*config, *snapshot, *plan, rule_sets, journal->get(), options);

  if (format == "json") {
    out << FormatJson(Value::MakeMap({{Value::String("plan"), PlanToValue(*plan)},
                                      {Value::String("execution"), ExecutionReportToValue(report)}}),
                      2)
        << "\n";
  } else {
    std::string decided;
    for (const PlannedRuleSet& planned : plan->rule_sets) {
      for (const std::string& rule : planned.matched_rules) decided += " " + planned.name + "/" + rule;
    }
    out << "decided:" << decided << (dry_run == "none" ? "" : " (dry run: " + dry_run + ")") << "\n";
    if (plan->steps.empty()) out << "nothing to do\n";
    out << FormatExecutionReport(report, dry_run != "none");
  }
  if (!report.ok()) {
    err << "ruleplane: apply: " << report.error->message << "\n";
    return kExitFinding;
  }
  return out ? kExitOk : kExitUsage;
}

}  // namespace ruleplane::cli
