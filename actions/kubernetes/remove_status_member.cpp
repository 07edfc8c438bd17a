// RemoveStatusMember: the Etcd's status.members without the named member.
#include "actions/kubernetes/etcd_status_entries.h"
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto member = FreshStatusEntry(context, "members", "name", StepName(step), log);
  if (!member.ok()) return member.error();
  return !member->has_value();
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  return RemoveStatusEntry(context, "members", "name", StepName(step), log);
}

}  // namespace

KubernetesActionHandler RemoveStatusMemberHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
