// RemoveEtcdFinalizer: the last step of the teardown; the API server then
// deletes the Etcd. Fenced by the Etcd's resourceVersion.
#include "actions/kubernetes/etcd_finalizer.h"
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok() && etcd.error().code == ErrorCode::kNotFound) return true;
  if (!etcd.ok()) return etcd.error();
  return !HasEtcdFinalizer(*etcd);
}

Status Perform(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  return WriteEtcdFinalizer(context, false, log);
}

}  // namespace

KubernetesActionHandler RemoveEtcdFinalizerHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
