// SetMemberStatus: one entry of the Etcd's status.members, by name.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_status_entries.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto member = FreshStatusEntry(context, "members", "name", StepName(step), log);
  if (!member.ok()) return member.error();
  return member->has_value() && HasStepFields(**member, step, {"id", "role", "status", "reason"});
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  const Value member = StatusEntryFromStep(step, "name", StepName(step),
                                           {"id", "role", "status", "reason", "lastTransitionTime"});
  return WriteStatusEntry(context, "members", "name", member, log);
}

}  // namespace

ActionHandler SetMemberStatusHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
