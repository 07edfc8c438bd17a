// Which etcd member left behind by a scale-down the leading member-agent
// removes, in the manner of etcd-druid's scale-in: at most one per heartbeat
// (the next is decided from the member list as it is then), learners first,
// the leader last, and only while the cluster keeps a quorum without it.
// Whether a running Pod still stands for a member is the caller's to read.
//
//   for (const EtcdMember& member : SurplusMembers(members, "etcd-main", 3, leader, self)) {
//     if (PodRuns(member) || !QuorumWithout(members, healthy, member).quorate()) continue;
//     MemberRemove(member.id);
//     break;
//   }
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "adapters/etcd/etcd_client.h"

namespace ruleplane {

// The members named <etcd_name>-<ordinal> with an ordinal >= `kept`, never
// `self`, in the order they are to be removed: learners, then voting
// members, the leader last; the highest ordinal first within each (as a
// StatefulSet scales down).
std::vector<EtcdMember> SurplusMembers(const std::vector<EtcdMember>& members, const std::string& etcd_name,
                                       int64_t kept, uint64_t leader, uint64_t self);

// The voting members, and the healthy ones among them, that a removal leaves.
struct Quorum {
  int64_t voting = 0;
  int64_t healthy = 0;
  bool quorate() const { return 2 * healthy > voting; }  // a majority of `voting`, exactly
};

// `healthy`: the IDs of the members that answered their status now with
// this cluster's ID and a leader. Removing a learner leaves the voters as
// they are.
Quorum QuorumWithout(const std::vector<EtcdMember>& members, const std::set<uint64_t>& healthy,
                     const EtcdMember& removed);

}  // namespace ruleplane
