// SetEtcdReady: the Etcd's status.ready.
#include "adapters/kubernetes/action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  const Value* ready = ValueAt(*etcd, {"status", "ready"});
  return ready != nullptr && *ready == StepValue(step, "ready");
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return context.PatchEtcdStatus(Value::MakeMap({{Value::String("ready"), StepValue(step, "ready")}}), log);
}

}  // namespace

ActionHandler SetEtcdReadyHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
