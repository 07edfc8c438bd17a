// LeaseRenewals: when this controller saw each member Lease renewed, on its
// own monotonic clock. A member's sidecar writes spec.renewTime from its
// node's wall clock, and the status rules compare it with the controller's
// (`now > renewTime + leaseDurationSeconds`): a node 40 s behind would read
// as an expired Lease and its Pod as failed. As the leader elector does
// (leader_election.h), freshness is judged by observed change instead: in
// the controller's snapshot a member Lease's renewTime is the controller's
// wall time of the moment it first saw the Lease with its present holder
// and renewTime. A Lease first seen is as old as its renewTime says (never
// newer than now): a controller that starts finds a dead member's Lease
// expired at once, and a Lease written by a node whose clock is behind
// reads as old only until its next renewal, far within the status rules'
// unknownGracePeriod. Thread-safe: the workers of one controller share one.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "engine/common/snapshot.h"

namespace ruleplane {

class LeaseRenewals {
 public:
  // `snapshot` with the renewTime of each renewed member Lease (named
  // <etcd>-<ordinal>) as observed; `steady_now` is the moment
  // `snapshot.observed_at` was taken, on the monotonic clock.
  Result<Snapshot> Observed(const Snapshot& snapshot, std::chrono::steady_clock::time_point steady_now);

 private:
  struct Seen {
    std::string renewal;                             // holder and renewTime as written
    std::chrono::steady_clock::time_point since;     // when first seen so
    std::chrono::steady_clock::time_point last_use;  // to forget Leases no longer seen
  };
  std::mutex mutex_;
  std::map<std::string, Seen> seen_;  // by namespace/name/uid
};

}  // namespace ruleplane
