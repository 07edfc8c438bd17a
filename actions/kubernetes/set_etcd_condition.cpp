// SetEtcdCondition: one entry of the Etcd's status.conditions, by type.
#include "actions/kubernetes/etcd_status_entries.h"
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto condition =
      FreshStatusEntry(context, "conditions", "type", StepValue(step, "type").string_value(), log);
  if (!condition.ok()) return condition.error();
  return condition->has_value() && HasStepFields(**condition, step, {"status", "reason", "message"});
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  const Value condition = StatusEntryFromStep(step, "type", StepValue(step, "type").string_value(),
                                              {"status", "reason", "message", "lastTransitionTime"});
  return WriteStatusEntry(context, "conditions", "type", condition, log);
}

}  // namespace

KubernetesActionHandler SetEtcdConditionHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
