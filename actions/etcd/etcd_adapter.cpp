#include "actions/etcd/etcd_adapter.h"

#include <algorithm>

#include "actions/step_params.h"
#include "adapters/etcd/membership_change.h"

namespace ruleplane {
namespace {

// The member a RemoveMember or UpdateMemberPeerUrl step means: by ID, or by name when it has none.
const EtcdMember* MemberOfStep(const PlanStep& step, const std::vector<EtcdMember>& members,
                               Status& problem) {
  const std::string hex = StepParam(step, "memberID");
  if (!hex.empty()) {
    auto id = ParseMemberIdHex(hex);
    if (!id.ok()) {
      problem = id.error();
      return nullptr;
    }
    for (const EtcdMember& member : members) {
      if (member.id == *id) return &member;
    }
    return nullptr;
  }
  std::string name = StepParam(step, "name");
  if (name.empty()) name = step.target;
  for (const EtcdMember& member : members) {
    if (member.name == name) return &member;
  }
  return nullptr;
}

const EtcdMember* ByName(const std::vector<EtcdMember>& members, const std::string& name) {
  for (const EtcdMember& member : members) {
    if (member.name == name) return &member;
  }
  return nullptr;
}

std::string NameParam(const PlanStep& step) {
  const std::string name = StepParam(step, "name");
  return name.empty() ? step.target : name;
}

// The client URL a step names, else the first one the member list has for its member.
Result<std::string> EndpointOfStep(const PlanStep& step, const std::vector<EtcdMember>& members) {
  const std::string endpoint = StepParam(step, "endpoint");
  if (!endpoint.empty()) return endpoint;
  const EtcdMember* member = ByName(members, NameParam(step));
  if (member == nullptr || member->client_urls.empty()) {
    return Error{ErrorCode::kNotFound, "no client URL for member " + NameParam(step), {}};
  }
  return member->client_urls.front();
}

}  // namespace

Result<bool> EtcdAdapter::IsDone(const PlanStep& step, RequestLog& log) {
  auto members = client_.MemberList(log);
  if (!members.ok()) return members.error();
  if (step.action == "AddMember") {
    // Done when the member is there as added and not started yet: a started
    // member with this peer URL is the old one (issue 23, hazard 16), which
    // a wiped member must not start as.
    const std::string url = StepParam(step, "peerURL");
    return std::any_of(members->begin(), members->end(),
                       [&](const EtcdMember& m) { return HasPeerUrl(m, url) && m.name.empty(); });
  }
  if (step.action == "RemoveMember") {
    Status problem;
    const EtcdMember* target = MemberOfStep(step, *members, problem);
    if (!problem.ok()) return problem.error();
    return target == nullptr;
  }
  if (step.action == "PromoteMember") {
    const EtcdMember* member = ByName(*members, NameParam(step));
    return member != nullptr && !member->is_learner;
  }
  if (step.action == "UpdateMemberPeerUrl") {
    Status problem;
    const EtcdMember* member = MemberOfStep(step, *members, problem);
    if (!problem.ok()) return problem.error();
    if (member == nullptr) return Error{ErrorCode::kNotFound, "no member " + StepParam(step, "memberID"), {}};
    return member->peer_urls == std::vector<std::string>{StepParam(step, "peerURL")};
  }
  if (step.action == "DefragmentMember") return false;
  if (step.action == "MoveLeader") {
    auto endpoint = EndpointOfStep(step, *members);
    if (!endpoint.ok()) return endpoint.error();
    auto status = client_.MemberStatus(*endpoint, log);
    if (!status.ok()) return status.error();
    return status->leader != status->member_id;
  }
  return Error{ErrorCode::kInvalidArgument, "the etcd adapter does not perform " + step.action, {}};
}

Status EtcdAdapter::Perform(const PlanStep& step, RequestLog& log) {
  auto members = client_.MemberList(log);
  if (!members.ok()) return members.error();
  if (step.action == "AddMember") {
    const std::string url = StepParam(step, "peerURL");
    if (Status alone = NoOtherMemberJoining(*members, url); !alone.ok()) return alone;
    auto added = client_.MemberAdd({url}, BoolParam(step, "learner"), log);
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
  if (step.action == "RemoveMember") {
    Status problem;
    const EtcdMember* target = MemberOfStep(step, *members, problem);
    if (!problem.ok()) return problem;
    if (target == nullptr) return {};  // already gone
    Status removed = client_.MemberRemove(target->id, log);
    if (!removed.ok() && removed.error().code == ErrorCode::kNotFound) return {};
    return removed;
  }
  if (step.action == "PromoteMember") {
    const EtcdMember* member = ByName(*members, NameParam(step));
    if (member == nullptr) {
      return Error{ErrorCode::kNotFound, "no member named " + NameParam(step) + " to promote", {}};
    }
    return client_.MemberPromote(member->id, log);
  }
  if (step.action == "UpdateMemberPeerUrl") {
    Status problem;
    const EtcdMember* member = MemberOfStep(step, *members, problem);
    if (!problem.ok()) return problem;
    if (member == nullptr) {
      return Error{ErrorCode::kNotFound, "no member " + StepParam(step, "memberID") + " to update", {}};
    }
    const std::string url = StepParam(step, "peerURL");
    if (Status alone = NoOtherMemberJoining(*members, url); !alone.ok()) return alone;
    return client_.MemberUpdate(member->id, {url}, log);
  }
  if (step.action == "DefragmentMember") {
    auto endpoint = EndpointOfStep(step, *members);
    if (!endpoint.ok()) return endpoint.error();
    return client_.Defragment(*endpoint, log);
  }
  if (step.action == "MoveLeader") {
    auto endpoint = EndpointOfStep(step, *members);
    if (!endpoint.ok()) return endpoint.error();
    const std::string transferee = StepParam(step, "transferee");
    const EtcdMember* next = ByName(*members, transferee);
    if (next == nullptr || next->is_learner) {
      return Error{ErrorCode::kFailedPrecondition,
                   "no started voting member named '" + transferee + "' to move the leadership to",
                   {}};
    }
    return client_.MoveLeader(*endpoint, next->id, log);
  }
  return Error{ErrorCode::kInvalidArgument, "the etcd adapter does not perform " + step.action, {}};
}

}  // namespace ruleplane
