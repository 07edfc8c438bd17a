// EtcdAdapter: the catalogue's `adapter: etcd` actions, against the cluster
// through EtcdClient:
//
// - AddMember (name, peerURL, learner): done when a member has that peer URL;
//   "member not found" (etcd gave it the ID of a member removed this second)
//   is kUnavailable (retried).
// - RemoveMember (memberID in hex, or name when memberID is ""): done when
//   there is no such member (404 = done).
// - PromoteMember (name): done when it is a voter; "learner not in sync" is
//   kUnavailable (retried).
// - UpdateMemberPeerUrl (memberID in hex, peerURL): done when that member's
//   peer URLs are exactly [peerURL].
// - DefragmentMember (name, endpoint).
// - MoveLeader (name, endpoint, transferee): done when the member at
//   `endpoint` no longer leads; the transferee's ID from the member list.
//
// AddMember and UpdateMemberPeerUrl wait (kUnavailable) while another member
// is still joining: one membership change at a time.
// Every check reads the member list first: a step retried after a timeout
// or a crash never adds a second member or removes the wrong one.
#pragma once

#include "actions/adapter.h"
#include "adapters/etcd/etcd_client.h"

namespace ruleplane {

class EtcdAdapter : public Adapter {
 public:
  explicit EtcdAdapter(EtcdClient& client) : client_(client) {}

  std::string_view kind() const override { return "etcd"; }
  Result<bool> IsDone(const PlanStep& step, RequestLog& log) override;
  Status Perform(const PlanStep& step, RequestLog& log) override;

 private:
  EtcdClient& client_;
};

}  // namespace ruleplane
