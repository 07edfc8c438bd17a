// RemoveEtcdCondition: the Etcd's status.conditions without the given type.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_status_entries.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto condition =
      FreshStatusEntry(context, "conditions", "type", StepValue(step, "type").string_value(), log);
  if (!condition.ok()) return condition.error();
  return !condition->has_value();
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return RemoveStatusEntry(context, "conditions", "type", StepValue(step, "type").string_value(), log);
}

}  // namespace

ActionHandler RemoveEtcdConditionHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
