// MoveLeader (name, endpoint, transferee): done when the member at `endpoint`
// no longer leads; the transferee's ID from the member list.
#include "actions/etcd/etcd_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, EtcdActionContext& context, RequestLog& log) {
  auto endpoint = EndpointOfStep(step, context.members);
  if (!endpoint.ok()) return endpoint.error();
  auto status = context.client.MemberStatus(*endpoint, log);
  if (!status.ok()) return status.error();
  return status->leader != status->member_id;
}

Status Perform(const PlanStep& step, EtcdActionContext& context, RequestLog& log) {
  auto endpoint = EndpointOfStep(step, context.members);
  if (!endpoint.ok()) return endpoint.error();
  const std::string transferee = StepParam(step, "transferee");
  const EtcdMember* next = MemberNamed(context.members, transferee);
  if (next == nullptr || next->is_learner) {
    return Error{ErrorCode::kFailedPrecondition,
                 "no started voting member named '" + transferee + "' to move the leadership to",
                 {}};
  }
  return context.client.MoveLeader(*endpoint, next->id, log);
}

}  // namespace

EtcdActionHandler MoveLeaderHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
