// The member an etcd action's step means, found in the member list.
#pragma once

#include <string>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "engine/common/error.h"
#include "engine/plan/plan.h"

namespace ruleplane {

// The step's `name` parameter, or its target when it is empty.
std::string StepMemberName(const PlanStep& step);

// The member named `name`, or nullptr.
const EtcdMember* MemberNamed(const std::vector<EtcdMember>& members, const std::string& name);

// The member a RemoveMember or UpdateMemberPeerUrl step means: by ID
// (`memberID` in hex), or by name when it has none; nullptr when there is no
// such member, and `problem` set when the ID does not parse.
const EtcdMember* MemberOfStep(const PlanStep& step, const std::vector<EtcdMember>& members, Status& problem);

// The client URL a step names (`endpoint`), else the first one the member
// list has for its member.
Result<std::string> EndpointOfStep(const PlanStep& step, const std::vector<EtcdMember>& members);

}  // namespace ruleplane
