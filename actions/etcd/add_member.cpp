// AddMember (name, peerURL, learner): done when a member with that peer URL
// is there as added and not started yet; "member not found" (etcd gave it the
// ID of a member removed this second) is kUnavailable (retried). One
// membership change at a time: it waits (kUnavailable) while another member
// is still joining.
#include <algorithm>

#include "actions/etcd/etcd_action_handler.h"
#include "adapters/etcd/membership_change.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, EtcdActionContext& context, RequestLog& /*log*/) {
  // Done when the member is there as added and not started yet: a started
  // member with this peer URL is the old one (issue 23, hazard 16), which
  // a wiped member must not start as.
  const std::string url = StepParam(step, "peerURL");
  return std::any_of(context.members.begin(), context.members.end(),
                     [&](const EtcdMember& m) { return HasPeerUrl(m, url) && m.name.empty(); });
}

Status Perform(const PlanStep& step, EtcdActionContext& context, RequestLog& log) {
  const std::string url = StepParam(step, "peerURL");
  if (Status alone = NoOtherMemberJoining(context.members, url); !alone.ok()) return alone;
  auto added = context.client.MemberAdd({url}, BoolParam(step, "learner"), log);
  if (!added.ok() && added.error().code == ErrorCode::kNotFound) {
    // etcd 3.4 derives the new ID from the peer URLs and the current second:
    // within the second its removed predecessor was added in, it is that
    // removed ID ("member not found"). A second later it is not.
    return Error{
        ErrorCode::kUnavailable, added.error().message + " (the ID of a member removed this second)", {}};
  }
  if (!added.ok()) return added.error();
  return {};
}

}  // namespace

EtcdActionHandler AddMemberHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
