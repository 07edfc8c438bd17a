#include "controller/apply_plan.h"

#include "controller/cluster_adapters.h"

namespace ruleplane {

ExecutionReport ApplyPlan(const KubeConfig& kube, const Snapshot& snapshot, const Plan& plan,
                          const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                          Journal* journal, const ApplyOptions& options) {
  KubeClient client(kube);
  client.set_server_dry_run(options.dry_run == ApplyOptions::DryRun::kServer);
  // The members are reached only for a plan that calls them (a defragmentation, a final snapshot).
  std::optional<Result<MemberEndpoints>> members;
  if (PlansMemberCalls(plan)) {
    RequestLog reads;
    members = ResolveMemberEndpoints(snapshot.document, client, reads, kMemberCallTimeout);
  }
  ClusterAdapters adapters(client, snapshot, members && members->ok() ? &**members : nullptr,
                           options.member_init_rules);
  ExecutorOptions executor_options;
  executor_options.dry_run = options.dry_run == ApplyOptions::DryRun::kClient;
  executor_options.allow_disruptive = options.allow_disruptive;
  executor_options.command =
      options.dry_run == ApplyOptions::DryRun::kServer ? "apply --dry-run=server" : "apply";
  const Value* name = ValueAt(snapshot.document, {"etcd", "metadata", "name"});
  executor_options.subject = "etcd " + adapters.kubernetes().namespace_name() + "/" +
                             (name != nullptr && name->is_string() ? name->string_value() : "");
  Executor executor(adapters.set(), journal, executor_options);
  return executor.Run(plan, snapshot, rule_sets, {});
}

}  // namespace ruleplane
