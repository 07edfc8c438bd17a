// AddEtcdFinalizer: etcd-druid's finalizer on the Etcd, so that its deletion
// waits for the teardown (DeleteStatefulSet, DeleteEtcdComponents,
// RemoveEtcdFinalizer); fenced by the Etcd's resourceVersion.
#include "actions/kubernetes/etcd_finalizer.h"
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  return HasEtcdFinalizer(*etcd);
}

Status Perform(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  return WriteEtcdFinalizer(context, true, log);
}

}  // namespace

KubernetesActionHandler AddEtcdFinalizerHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
