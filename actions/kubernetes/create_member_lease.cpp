// CreateMemberLease: the member's Lease (gardener.cloud/purpose etcd-member-lease).
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.Exists({"coordination.k8s.io/v1", "leases", context.namespace_name(), StepName(step), ""},
                        log);
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.CreateUnlessPresent({"coordination.k8s.io/v1", "leases", context.namespace_name(), "", ""},
                                     EtcdLease(context.observed_etcd(), StepName(step), "etcd-member-lease"),
                                     log);
}

}  // namespace

KubernetesActionHandler CreateMemberLeaseHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
