// SetMemberStatus: one entry of the Etcd's status.members, by name.
#include "actions/kubernetes/etcd_status_entries.h"
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto member = FreshStatusEntry(context, "members", "name", StepName(step), log);
  if (!member.ok()) return member.error();
  return member->has_value() && HasStepFields(**member, step, {"id", "role", "status", "reason"});
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  const Value member = StatusEntryFromStep(step, "name", StepName(step),
                                           {"id", "role", "status", "reason", "lastTransitionTime"});
  return WriteStatusEntry(context, "members", "name", member, log);
}

}  // namespace

KubernetesActionHandler SetMemberStatusHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
