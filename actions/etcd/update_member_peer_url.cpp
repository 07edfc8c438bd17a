// UpdateMemberPeerUrl (memberID in hex, peerURL): done when that member's peer
// URLs are exactly [peerURL]. One membership change at a time: it waits
// (kUnavailable) while another member is still joining.
#include "actions/etcd/etcd_action_handler.h"
#include "adapters/etcd/membership_change.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, EtcdActionContext& context, RequestLog& /*log*/) {
  Status problem;
  const EtcdMember* member = MemberOfStep(step, context.members, problem);
  if (!problem.ok()) return problem.error();
  if (member == nullptr) return Error{ErrorCode::kNotFound, "no member " + StepParam(step, "memberID"), {}};
  return member->peer_urls == std::vector<std::string>{StepParam(step, "peerURL")};
}

Status Perform(const PlanStep& step, EtcdActionContext& context, RequestLog& log) {
  Status problem;
  const EtcdMember* member = MemberOfStep(step, context.members, problem);
  if (!problem.ok()) return problem;
  if (member == nullptr) {
    return Error{ErrorCode::kNotFound, "no member " + StepParam(step, "memberID") + " to update", {}};
  }
  const std::string url = StepParam(step, "peerURL");
  if (Status alone = NoOtherMemberJoining(context.members, url); !alone.ok()) return alone;
  return context.client.MemberUpdate(member->id, {url}, log);
}

}  // namespace

EtcdActionHandler UpdateMemberPeerUrlHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
