// MemberBackups: the leading member-agent's backups, run apart from its
// heartbeat (on a thread of their own, with clients of their own) so that a
// snapshot that takes minutes never delays the member's Lease renewal, whose
// expiry the status rules read as NotReady.
//
// Each round: when this member leads, take the full snapshot the cron
// schedule asks for (or the first one), else a delta every delta period
// (none under one second; the next round again when the memory limit cut
// the last one; a full one instead when the store's credentials changed),
// compressed as the options say, into the backup store; renew the full or delta snapshot Lease
// with the revision it holds (holderIdentity: the revision, decimal); and keep the Etcd's BackupReady
// condition: True (BackupSucceeded) after a snapshot was uploaded, False (BackupFailed) after one failed,
// written only when the condition changes. DEP-01 gives that condition to the leading sidecar
// ("the most recent backup upload (full or incremental) succeeded",
// seeds/000 lines 169, 251-252); the reasons are etcd-druid's. Then, when
// this member still leads and the garbage collection period has passed since
// its last collection (the first round collects), delete what
// SnapshotsToCollect (backup_retention.h) decides, as etcd-backup-restore's
// collector in the leading sidecar does.
//
//   EtcdClient cluster(config);          // not shared with the heartbeat
//   cluster.set_cancel(&stopping);       // SIGTERM ends a snapshot in progress
//   MemberBackups backups(options, cluster, kube, store, &stopping);
//   BackupRound round = backups.Run(std::chrono::system_clock::now());
//
// Out of schedule (member-agent's /snapshot/full and /snapshot/delta, as
// etcd-backup-restore's TriggerFullSnapshot and TriggerDeltaSnapshot): any
// thread calls Request and waits; the backup thread, which alone uses the
// clients and the store, serves it at its next wake-up (ServeRequests),
// woken at once by the request (WaitForWork).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "engine/common/value.h"
#include "member/backup_metrics.h"
#include "member/backup_taker.h"
#include "member/member_agent.h"

namespace ruleplane {

// What one backup round did, for the log line.
struct BackupRound {
  bool leads = false;
  std::string backup;                  // the snapshot taken, "" when none
  std::vector<std::string> collected;  // paths in the store garbage-collected ("v2/Full-...")
  std::string error;                   // what went wrong, "" when nothing
  bool idle() const { return backup.empty() && collected.empty() && error.empty(); }
  Value ToValue() const;
};

// A snapshot asked for out of schedule.
struct SnapshotRequest {
  bool full = true;    // else a delta
  bool final = false;  // a full snapshot named ".final"
};

// How the backup thread answered a SnapshotRequest.
struct RequestedSnapshot {
  enum class Outcome {
    kTaken,       // `snapshot` is in the store
    kNothingNew,  // a delta, and the cluster has not moved since the last snapshot
    kNotLeader,   // this member does not lead: `leader_client_url` does ("" when unknown)
    kTooSoon,     // one of the kind was taken on request within the interval: `error` says when to ask again
    kFailed,      // `error` says why (also a timeout, or the agent stopping)
  };
  Outcome outcome = Outcome::kFailed;
  StoredSnapshot snapshot;
  std::string leader_client_url;
  std::string error;
};

class MemberBackups {
 public:
  // While `*stopping` is true, a backup that fails (the clients were
  // cancelled) is not reported as BackupFailed. May be null.
  MemberBackups(MemberAgentOptions options, EtcdClient& cluster, KubeClient& kube, BackupStore& store,
                const std::atomic<bool>* stopping = nullptr);

  BackupRound Run(std::chrono::system_clock::time_point now);

  // Thread-safe: queues `request` for the backup thread and waits at most
  // `timeout` for its answer (kFailed after it, or once Close was called).
  RequestedSnapshot Request(SnapshotRequest request, std::chrono::milliseconds timeout);
  // The backup thread: answers every queued request, in order; one line per
  // snapshot taken or failed into `rounds` (for the log).
  void ServeRequests(std::vector<BackupRound>& rounds);
  // The backup thread: waits until `until`, a request, or `stop` (checked
  // every 100 ms: a signal handler sets it and cannot notify). False when stopping.
  bool WaitForWork(std::chrono::steady_clock::time_point until, const std::atomic<bool>& stop);
  // Answers the queued requests kFailed and every later one at once.
  void Close();

  // Thread-safe.
  const BackupMetrics& metrics() const { return metrics_; }

 private:
  struct Pending {
    SnapshotRequest request;
    bool done = false;
    RequestedSnapshot answer;
  };
  RequestedSnapshot Serve(const SnapshotRequest& request, BackupRound& round);
  // A snapshot taken at `kind` ("Full"/"Incr") timed, into the metrics.
  Result<TakenBackup> Take(const std::string& kind, const BackupOptions& backup);
  // After a snapshot was taken or failed: its Lease, BackupReady, the round's fields.
  void Report(const Result<TakenBackup>& taken, const std::string& lease, BackupRound& round);
  // The backup due now, taken: its name is "" when none was due or the
  // cluster had not moved; `lease` is the snapshot Lease it renews.
  struct DueBackup {
    TakenBackup taken;
    std::string lease;
  };
  Result<DueBackup> TakeDueBackup(std::chrono::system_clock::time_point now);
  // Deletes what SnapshotsToCollect decides at `now` over the store's
  // listing of `cluster`'s snapshots (names beyond its revision, and other
  // clusters' snapshots, left out), into `round.collected`; stops at the
  // first deletion that fails.
  Status CollectGarbage(const EtcdStatus& cluster, std::chrono::system_clock::time_point now,
                        BackupRound& round);
  Status SetBackupReady(bool succeeded, const std::string& message,
                        std::chrono::system_clock::time_point now);

  // A BackupReady report: how the snapshot ended, and when.
  struct Readiness {
    bool succeeded = false;
    std::string message;
    std::chrono::system_clock::time_point at;
  };
  // The last report, while the API server has not taken it (made again each round).
  std::optional<Readiness> unreported_readiness_;

  MemberAgentOptions options_;
  EtcdClient& cluster_;
  KubeClient& kube_;
  BackupStore& store_;
  const std::atomic<bool>* stopping_;
  std::optional<std::chrono::system_clock::time_point> last_delta_;
  // When a full and a delta were last taken on request (steady: a clock step changes nothing).
  std::optional<std::chrono::steady_clock::time_point> last_requested_full_, last_requested_delta_;
  std::optional<int64_t> credentials_modified_;  // as first seen, then at each change
  std::optional<std::chrono::system_clock::time_point> last_collection_;
  BackupMetrics metrics_;
  std::mutex requests_mutex_;
  std::condition_variable requests_changed_;
  std::deque<std::shared_ptr<Pending>> requests_;
  bool closed_ = false;
};

}  // namespace ruleplane
