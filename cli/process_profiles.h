// The processes that load rule sets, as the conformance check
// (engine/verify/conformance.h) takes them: the subject each loads, the
// adapter kinds it registers, what its observer writes.
//
//   controller   EtcdCluster     controller/etcd_reconciler.cpp (and `apply`, controller/apply_plan.cpp)
//   member-init  EtcdMemberInit  member/member_init.cpp
//
// member-agent loads no rule set.
#pragma once

#include <vector>

#include "engine/verify/conformance.h"

namespace ruleplane::cli {

const std::vector<ProcessProfile>& ProcessProfiles();

}  // namespace ruleplane::cli
