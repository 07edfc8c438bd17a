// RemoveStatusMember: the Etcd's status.members without the named member.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_status_entries.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto member = FreshStatusEntry(context, "members", "name", StepName(step), log);
  if (!member.ok()) return member.error();
  return !member->has_value();
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  return RemoveStatusEntry(context, "members", "name", StepName(step), log);
}

}  // namespace

ActionHandler RemoveStatusMemberHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = false, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
