// LeaderElector: one leader among the replicas of a process, through a
// coordination.k8s.io/v1 Lease, as client-go's leaderelection package does it
// (defaults 15 s lease, 10 s renew deadline, 2 s retry period).
//
//   LeaderElector elector(kube, {"shoot", "ruleplane-controller", hostname + "_" + random});
//   Status ended = elector.Run([&] { return stopping.load(); },
//                              [&](bool leading) { if (leading) StartWork(); else StopWork(); });
//   // ended is an error once the leadership was lost: exit, as OnStoppedLeading does.
//
// A round (TryAcquireOrRenew) reads the Lease and creates it when it is
// absent; otherwise it writes the Lease when this elector holds it, when
// nobody does (holderIdentity ""), or when the holder's record has expired,
// every write fenced by the resourceVersion just read. Expiry is judged by
// this process's own monotonic clock, never by the renewTime another process
// wrote (clocks skew): a record counts as expired once it has been seen
// unchanged (holder, renewTime, resourceVersion) for longer than the
// leaseDurationSeconds it declares, from the moment this elector first saw it.
// The leader stops leading when no renewal has succeeded for renew_deadline.
// Rounds are a retry period apart (without client-go's jitter).
//
// The Lease is not a fence: two processes can both believe they lead for a
// while (a paused leader wakes up after its lease expired). Every write a
// leader makes elsewhere must still carry the resourceVersion (or etcd
// mod_revision) it observed, so that a stale leader's write is refused.
//
// One thread drives an elector (TryAcquireOrRenew, Release, Run); IsLeader()
// may be read from any thread. A KubeClient's timeout bounds each request:
// give it one shorter than renew_deadline, so that a hung request cannot
// outlast the leadership.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "adapters/kubernetes/kube_client.h"
#include "engine/common/error.h"

namespace ruleplane {

struct LeaderElectionConfig {
  std::string namespace_name;
  std::string lease_name;
  std::string identity;  // unique among the candidates (client-go: hostname + "_" + a UUID)
  // How long the others wait, after they last saw the record change, before
  // they take the lease (written as leaseDurationSeconds, rounded up).
  std::chrono::milliseconds lease_duration{15000};
  // How long the leader keeps trying to renew before it gives up leading;
  // shorter than lease_duration.
  std::chrono::milliseconds renew_deadline{10000};
  // Between two rounds; shorter than renew_deadline.
  std::chrono::milliseconds retry_period{2000};
};

class LeaderElector {
 public:
  LeaderElector(KubeClient& kube, LeaderElectionConfig config);

  const LeaderElectionConfig& config() const { return config_; }

  // One round at wall-clock time `now` (the renewTime and acquireTime
  // written): true when this elector holds the lease after it. Someone else
  // holding an unexpired lease, or winning the write (409), is false, not an
  // error. Errors: a bad config (kInvalidArgument), and failed reads and
  // writes as KubeClient reports them.
  Result<bool> TryAcquireOrRenew(std::chrono::system_clock::time_point now);

  // When leading, gives the lease up (client-go's ReleaseOnCancel):
  // holderIdentity "" and leaseDurationSeconds 1, fenced by the
  // resourceVersion of the last renewal, so that another candidate takes it at
  // once. Nothing to do when not leading. kConflict when the Lease changed
  // since that renewal (it is not ours to release any more).
  Status Release();

  // Acquires the lease (a round every retry_period), then renews it every
  // retry_period, until `should_stop` returns true (polled every 50 ms
  // between rounds) or the leadership is lost. `on_change(true)` when it
  // starts leading, `on_change(false)` when it stops. On stop while leading it
  // releases the lease and returns what Release() returned; on stop otherwise,
  // ok. When no renewal has succeeded for renew_deadline it stops leading and
  // returns kFailedPrecondition "lost the lease <ns>/<name>: ...": the caller
  // should exit. Errors that retrying cannot fix (kPermissionDenied,
  // kInvalidArgument, ...) end it at once; others (kUnavailable,
  // kDeadlineExceeded, kNotFound for a namespace not there yet, kIo for a
  // token file being rotated) are retried.
  Status Run(const std::function<bool()>& should_stop, const std::function<void(bool leading)>& on_change);

  // Whether the last Lease record this elector read or wrote names it the
  // holder (and Run has not given the leadership up).
  bool IsLeader() const { return is_leader_.load(); }
  // Whether this process may still act as the leader: it is the holder and
  // its last successful round began less than renew_deadline ago, by its own
  // monotonic clock. Unlike IsLeader, this turns false by itself when the
  // renewals stop (a process paused past its lease, a partition), before any
  // thread has noticed: check it right before each write. Any thread.
  bool HoldsLease() const;
  // The holderIdentity of the last Lease record this elector read or wrote
  // ("" before any, or when the lease is free): client-go's GetLeader().
  const std::string& ObservedHolder() const { return observed_.holder; }

 private:
  // What identifies a version of the Lease's record, and what a write keeps.
  struct Record {
    std::string holder, renew_time, resource_version;
    int64_t duration_seconds = 0;  // 0 when the Lease does not say
    int64_t transitions = 0;
  };
  static Record RecordOf(const Value& lease);
  // Takes `record` as the one observed now, restarting the expiry clock when
  // it differs from the last one observed.
  void Observe(const Record& record);
  Status Validate() const;
  std::string LeaseName() const;

  KubeClient& kube_;
  LeaderElectionConfig config_;
  Record observed_;
  bool observed_any_ = false;
  std::chrono::steady_clock::time_point observed_at_;  // when observed_ was first seen
  std::atomic<bool> is_leader_{false};
  // steady_clock ticks when the last round that found this elector the holder began.
  std::atomic<int64_t> renewed_at_{0};
};

}  // namespace ruleplane
