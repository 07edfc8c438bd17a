#include "controller/apply_plan.h"

#include "adapters/backup_sidecar/backup_sidecar_adapter.h"
#include "adapters/kubernetes/kubernetes_adapter.h"

namespace ruleplane {

ExecutionReport ApplyPlan(const KubeConfig& kube, const Snapshot& snapshot, const Plan& plan,
                          const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                          Journal* journal, const ApplyOptions& options) {
  KubeClient client(kube);
  client.set_server_dry_run(options.dry_run == ApplyOptions::DryRun::kServer);
  KubernetesAdapter kubernetes(client, snapshot);
  BackupSidecarAdapter sidecar(snapshot, client);
  AdapterSet adapters;
  adapters.Add(&kubernetes);
  adapters.Add(&sidecar);
  ExecutorOptions executor_options;
  executor_options.dry_run = options.dry_run == ApplyOptions::DryRun::kClient;
  executor_options.allow_disruptive = options.allow_disruptive;
  executor_options.command =
      options.dry_run == ApplyOptions::DryRun::kServer ? "apply --dry-run=server" : "apply";
  const Value* name = ValueAt(snapshot.document, {"etcd", "metadata", "name"});
  executor_options.subject = "etcd " + kubernetes.namespace_name() + "/" +
                             (name != nullptr && name->is_string() ? name->string_value() : "");
  Executor executor(adapters, journal, executor_options);
  return executor.Run(plan, snapshot, rule_sets, {});
}

}  // namespace ruleplane
