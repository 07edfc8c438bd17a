// CreateCompactionJob: <etcd>-compactor. AlreadyExists is done: a job of this
// name runs or ran; etcd-druid waits for it too. The Job compacts the history
// of the cluster a member answered for while the plan ran, when one did
// (CompactionScope).
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  return context.Exists(
      {"batch/v1", "jobs", context.namespace_name(), CompactionJobName(context.observed_etcd()), ""}, log);
}

Status Perform(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto job = CompactionJob(context.observed_etcd(), context.compaction_scope());
  if (!job.ok()) return job.error();
  return context.CreateUnlessPresent({"batch/v1", "jobs", context.namespace_name(), "", ""}, *job, log);
}

}  // namespace

KubernetesActionHandler CreateCompactionJobHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
