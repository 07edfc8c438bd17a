#include "actions/etcd/step_member.h"

#include "actions/step_params.h"

namespace ruleplane {

std::string StepMemberName(const PlanStep& step) {
  const std::string name = StepParam(step, "name");
  return name.empty() ? step.target : name;
}

const EtcdMember* MemberNamed(const std::vector<EtcdMember>& members, const std::string& name) {
  for (const EtcdMember& member : members) {
    if (member.name == name) return &member;
  }
  return nullptr;
}

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
  return MemberNamed(members, StepMemberName(step));
}

Result<std::string> EndpointOfStep(const PlanStep& step, const std::vector<EtcdMember>& members) {
  const std::string endpoint = StepParam(step, "endpoint");
  if (!endpoint.empty()) return endpoint;
  const EtcdMember* member = MemberNamed(members, StepMemberName(step));
  if (member == nullptr || member->client_urls.empty()) {
    return Error{ErrorCode::kNotFound, "no client URL for member " + StepMemberName(step), {}};
  }
  return member->client_urls.front();
}

}  // namespace ruleplane
