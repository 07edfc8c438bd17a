// One membership change at a time (issue 23, hazard 18): what AddMember,
// UpdateMemberPeerUrl and member-agent's peer URL repair check before they
// change etcd's member list.
#pragma once

#include <string>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "engine/common/error.h"

namespace ruleplane {

bool HasPeerUrl(const EtcdMember& member, const std::string& url);

// kUnavailable naming the member when one other than the member with
// `peer_url` was added and has not started yet, or is a learner: it is still
// joining, and two voters added at once left a cluster without a leader.
Status NoOtherMemberJoining(const std::vector<EtcdMember>& members, const std::string& peer_url);

}  // namespace ruleplane
