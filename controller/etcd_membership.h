// etcd's own word on who is a member, read by the controller when it shows a
// data-loss bound (issue 41, hazard 4): a member Lease's revision counts
// toward the bound only when the member that recorded it is in the member
// list of the cluster a member answers for now. A Lease left by another
// cluster on the same name (a split brain, an Etcd re-created), or patched by
// someone else, does not move the bound an approver reads.
//
// etcd 3.4 answers the member list from a member's own view, without a
// leader (MemberList is linearizable only from 3.5 on): a survivor of a
// quorum loss still answers.
#pragma once

#include <string>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "adapters/request.h"

namespace ruleplane {

struct EtcdMembership {
  // In hex without padding, as the member Leases write them
  // (kRevisionMemberAnnotation, etcd-backup-restore's holderIdentity).
  std::string cluster_id = {};               // "" when no member answered
  int64_t revision = 0;                      // the answering member's revision
  std::vector<std::string> member_ids = {};  // the members the answering member lists
  std::string unavailable = {};              // why there is no member list, when there is none

  bool observed() const { return !cluster_id.empty(); }
  bool Lists(const std::string& member_id, const std::string& cluster) const;
};

// The first of the client's endpoints that answers gives its cluster ID and
// its member list; when none answers, `unavailable` says why.
EtcdMembership ReadEtcdMembership(EtcdClient& client, RequestLog& log);

}  // namespace ruleplane
