// RemoveMember (memberID in hex, or name when memberID is ""): done when there
// is no such member; one that etcd no longer knows (404) is gone already.
#include "actions/etcd/etcd_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, EtcdActionContext& context, RequestLog& /*log*/) {
  Status problem;
  const EtcdMember* target = MemberOfStep(step, context.members, problem);
  if (!problem.ok()) return problem.error();
  return target == nullptr;
}

Status Perform(const PlanStep& step, EtcdActionContext& context, RequestLog& log) {
  Status problem;
  const EtcdMember* target = MemberOfStep(step, context.members, problem);
  if (!problem.ok()) return problem;
  if (target == nullptr) return {};  // already gone
  Status removed = context.client.MemberRemove(target->id, log);
  if (!removed.ok() && removed.error().code == ErrorCode::kNotFound) return {};
  return removed;
}

}  // namespace

EtcdActionHandler RemoveMemberHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
