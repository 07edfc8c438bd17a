// SetEtcdReady: the Etcd's status.ready.
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  const Value* ready = ValueAt(*etcd, {"status", "ready"});
  return ready != nullptr && *ready == StepValue(step, "ready");
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return context.PatchEtcdStatus(Value::MakeMap({{Value::String("ready"), StepValue(step, "ready")}}), log);
}

}  // namespace

KubernetesActionHandler SetEtcdReadyHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
