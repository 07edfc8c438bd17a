// CreateMemberLease: the member's Lease (gardener.cloud/purpose etcd-member-lease).
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.Exists({"coordination.k8s.io/v1", "leases", context.namespace_name(), StepName(step), ""},
                        log);
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.CreateUnlessPresent({"coordination.k8s.io/v1", "leases", context.namespace_name(), "", ""},
                                     EtcdLease(context.observed_etcd(), StepName(step), "etcd-member-lease"),
                                     log);
}

}  // namespace

ActionHandler CreateMemberLeaseHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = true, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
