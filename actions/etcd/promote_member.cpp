// PromoteMember (name): done when the member is a voter. etcd's "learner not
// in sync" is kUnavailable (retried).
#include "actions/etcd/etcd_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, EtcdActionContext& context, RequestLog& /*log*/) {
  const EtcdMember* member = MemberNamed(context.members, StepMemberName(step));
  return member != nullptr && !member->is_learner;
}

Status Perform(const PlanStep& step, EtcdActionContext& context, RequestLog& log) {
  const EtcdMember* member = MemberNamed(context.members, StepMemberName(step));
  if (member == nullptr) {
    return Error{ErrorCode::kNotFound, "no member named " + StepMemberName(step) + " to promote", {}};
  }
  return context.client.MemberPromote(member->id, log);
}

}  // namespace

EtcdActionHandler PromoteMemberHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
