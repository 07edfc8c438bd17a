// AddEtcdFinalizer: etcd-druid's finalizer on the Etcd, so that its deletion
// waits for the teardown (DeleteStatefulSet, DeleteEtcdComponents,
// RemoveEtcdFinalizer); fenced by the Etcd's resourceVersion.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_finalizer.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  return HasEtcdFinalizer(*etcd);
}

Status Perform(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  return WriteEtcdFinalizer(context, true, log);
}

}  // namespace

ActionHandler AddEtcdFinalizerHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
