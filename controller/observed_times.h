// ObservedTimes: times that other machines' clocks wrote, judged on this
// controller's monotonic clock instead, as the leader elector judges its Lease
// (leader_election.h). Two such times decide something:
//
//   - a member Lease's spec.renewTime, written from its node's wall clock:
//     the status rules compare it with the controller's
//     (`now > renewTime + leaseDurationSeconds`), so a node 40 s behind would
//     read as an expired Lease and its Pod as failed;
//   - the Etcd's status.lastOperation.lastDisruptiveStepTime, written by
//     whichever controller replica acted: --min-disruptive-interval compares
//     it with this replica's clock, so a writer 40 s behind would let the
//     next disruptive step through 40 s early.
//
// In the controller's snapshot each becomes this controller's wall time of
// the moment it first saw the value as it stands, aged on the monotonic clock
// since. On first sight the two differ, each toward safety:
//
//   - a Lease is as old as its renewTime says (never newer than now): a
//     controller that starts finds a dead member's Lease expired at once, and
//     a node whose clock is behind reads as old only until its next renewal,
//     far within the status rules' unknownGracePeriod;
//   - a disruptive step written less than an hour ago is taken to have
//     happened now: a replica that starts or takes over waits one full
//     interval before the next (it cannot tell another clock's skew from the
//     step's age); an older one is as old as written.
//
// Thread-safe: the workers of one controller share one.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "engine/common/snapshot.h"

namespace ruleplane {

class ObservedTimes {
 public:
  // `snapshot` with each renewed member Lease's renewTime (Leases named
  // <etcd>-<ordinal>) and the Etcd's lastDisruptiveStepTime as observed;
  // `steady_now` is the moment `snapshot.observed_at` was taken, on the
  // monotonic clock.
  Result<Snapshot> Observed(const Snapshot& snapshot, std::chrono::steady_clock::time_point steady_now);

 private:
  enum class FirstSight { kAsWritten, kRecentIsNow };
  // The wall time at which `written` (the RFC 3339 time of `value`, the
  // thing that changes when it is written again) is taken to be, on first
  // sight by `first_sight`, then aged on the monotonic clock; nullopt when
  // `written` does not parse.
  std::optional<std::chrono::system_clock::time_point> SeenAt(
      const std::string& key, const std::string& value, const std::string& written, FirstSight first_sight,
      std::chrono::system_clock::time_point wall_now, std::chrono::steady_clock::time_point steady_now);

  struct Seen {
    std::string value;                               // as written
    std::chrono::steady_clock::time_point since;     // when first seen so
    std::chrono::steady_clock::time_point last_use;  // to forget what is no longer seen
  };
  std::mutex mutex_;
  std::map<std::string, Seen> seen_;  // by namespace/name/uid and what
};

}  // namespace ruleplane
