// RemoveEtcdFinalizer: the last step of the teardown; the API server then
// deletes the Etcd. Fenced by the Etcd's resourceVersion.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_finalizer.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok() && etcd.error().code == ErrorCode::kNotFound) return true;
  if (!etcd.ok()) return etcd.error();
  return !HasEtcdFinalizer(*etcd);
}

Status Perform(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  return WriteEtcdFinalizer(context, false, log);
}

}  // namespace

ActionHandler RemoveEtcdFinalizerHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
