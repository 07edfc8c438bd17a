// DeleteMemberLease: the member's Lease, fenced by the uid observed: the
// Lease the plan was made from, not one created since. (Not its
// resourceVersion: a running member renews it.)
#include "adapters/kubernetes/action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto lease =
      context.Exists({"coordination.k8s.io/v1", "leases", context.namespace_name(), StepName(step), ""}, log);
  if (!lease.ok()) return lease.error();
  return !*lease;
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  const std::string name = StepName(step);
  return context.DeleteObserved({"coordination.k8s.io/v1", "leases", context.namespace_name(), name, ""},
                                context.ObservedUid("leases", name), log);
}

}  // namespace

ActionHandler DeleteMemberLeaseHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = true, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
