// ruleplane apply: observe an Etcd on the API server (or take a snapshot
// file), plan, gate, execute through the Kubernetes adapter, journal.
#include <filesystem>
#include <iostream>

#include "adapters/kubernetes/kubernetes_adapter.h"
#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/read_file.h"
#include "cli/rule_library.h"
#include "engine/common/json_value.h"
#include "execution/executor.h"
#include "execution/journal.h"

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
  if (references.empty()) references = DefaultRuleReferences();
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

  KubeClient client(*config);
  client.set_server_dry_run(dry_run == "server");
  KubernetesAdapter kubernetes(client, *snapshot);
  AdapterSet adapters;
  adapters.Add(&kubernetes);
  ExecutorOptions options;
  options.dry_run = dry_run == "client";
  options.allow_disruptive = flags.Has("--allow-disruptive");
  options.command = dry_run == "server" ? "apply --dry-run=server" : "apply";
  // The journal's subject: a resumed run for the same Etcd finds the interrupted one.
  const Value* name = snapshot->document.Find("etcd");
  for (const char* key : {"metadata", "name"})
    name = name != nullptr && name->is_map() ? name->Find(key) : nullptr;
  options.subject = "etcd " + kubernetes.namespace_name() + "/" +
                    (name != nullptr && name->is_string() ? name->string_value() : "");
  Executor executor(adapters, journal->get(), options);
  ExecutionReport report = executor.Run(*plan, *snapshot, rule_sets, {});

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
