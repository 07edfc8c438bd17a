// RemoveEtcdCondition: the Etcd's status.conditions without the given type.
#include "actions/kubernetes/etcd_status_entries.h"
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto condition =
      FreshStatusEntry(context, "conditions", "type", StepValue(step, "type").string_value(), log);
  if (!condition.ok()) return condition.error();
  return !condition->has_value();
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return RemoveStatusEntry(context, "conditions", "type", StepValue(step, "type").string_value(), log);
}

}  // namespace

KubernetesActionHandler RemoveEtcdConditionHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
