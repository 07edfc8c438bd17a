// EtcdAdapter: the catalogue's `adapter: etcd` actions, against the cluster
// through EtcdClient: AddMember, RemoveMember, PromoteMember,
// UpdateMemberPeerUrl, DefragmentMember, MoveLeader, each one handler in a
// file of this folder named for it (etcd_action_handler.h).
//
// Every check reads the member list first, and the handler is given it
// (etcd_action_context.h): a step retried after a timeout or a crash never
// adds a second member or removes the wrong one. AddMember and
// UpdateMemberPeerUrl wait (kUnavailable) while another member is still
// joining: one membership change at a time.
#pragma once

#include <chrono>
#include <optional>

#include "actions/adapter.h"
#include "adapters/etcd/etcd_client.h"

namespace ruleplane {

class EtcdAdapter : public Adapter {
 public:
  explicit EtcdAdapter(EtcdClient& client) : client_(client) {}

  std::string_view kind() const override { return "etcd"; }
  Result<bool> IsDone(const PlanStep& step, RequestLog& log) override;
  Status Perform(const PlanStep& step, RequestLog& log) override;
  std::optional<std::chrono::milliseconds> PollInterval(const PlanStep& step) const override;

 private:
  EtcdClient& client_;
};

}  // namespace ruleplane
