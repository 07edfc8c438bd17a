// SetEtcdCondition: one entry of the Etcd's status.conditions, by type.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_status_entries.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto condition =
      FreshStatusEntry(context, "conditions", "type", StepValue(step, "type").string_value(), log);
  if (!condition.ok()) return condition.error();
  return condition->has_value() && HasStepFields(**condition, step, {"status", "reason", "message"});
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  const Value condition = StatusEntryFromStep(step, "type", StepValue(step, "type").string_value(),
                                              {"status", "reason", "message", "lastTransitionTime"});
  return WriteStatusEntry(context, "conditions", "type", condition, log);
}

}  // namespace

ActionHandler SetEtcdConditionHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
