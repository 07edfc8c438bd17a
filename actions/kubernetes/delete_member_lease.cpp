// DeleteMemberLease: the member's Lease, fenced by the uid observed: the
// Lease the plan was made from, not one created since. (Not its
// resourceVersion: a running member renews it.)
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto lease =
      context.Exists({"coordination.k8s.io/v1", "leases", context.namespace_name(), StepName(step), ""}, log);
  if (!lease.ok()) return lease.error();
  return !*lease;
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  const std::string name = StepName(step);
  return context.DeleteObserved({"coordination.k8s.io/v1", "leases", context.namespace_name(), name, ""},
                                context.ObservedUid("leases", name), log);
}

}  // namespace

KubernetesActionHandler DeleteMemberLeaseHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
