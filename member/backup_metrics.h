// BackupMetrics: the Prometheus metrics of etcd-backup-restore
// (pkg/metrics/metrics.go) that member-agent's backups can honestly fill,
// with its names, types, labels and help texts:
//
//   etcdbr_snapshot_latest_revision{kind}             gauge: the newest snapshot's last revision
//   etcdbr_snapshot_latest_timestamp{kind}            gauge: its creation time (unix seconds)
//   etcdbr_snapshot_required{kind}                    gauge: 1 after a snapshot of the kind failed
//   etcdbr_snapshot_duration_seconds{kind,succeeded}  histogram (Prometheus' default buckets)
//   etcdbr_snapshot_gc_total{kind,succeeded}          counter: snapshots garbage-collected
//   etcdbr_snapstore_latest_deltas_total              gauge: deltas after the newest full
//   etcdbr_snapstore_latest_deltas_revisions_total    gauge: revisions in those deltas
//   etcdbr_snapshotter_failure{error}                 counter: failed snapshots and collections
//
// and one of ruleplane's own, so that a round that took nothing is seen:
//
//   ruleplane_backup_rounds_total                     counter: scheduled rounds run while leading
//
// kind is "Full" or "Incr" (etcd-backup-restore's SnapshotKindFull and
// SnapshotKindDelta; its "Chunk" series, for multipart uploads, are left out:
// they would stay 0). Every series exists from the start at 0, as
// etcd-backup-restore initializes them. The error label carries the message,
// as etcd-backup-restore's does; at most kMaxErrorSeries distinct messages
// are kept apart, later ones are counted under error="other", so that
// messages with revisions in them cannot grow the page without bound.
// Thread-safe: the backup thread records, the API's thread renders.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/local/backup_store.h"

namespace ruleplane {

class BackupMetrics {
 public:
  static constexpr size_t kMaxErrorSeries = 16;

  // The store as listed: the newest snapshot of each kind, and the deltas
  // after the newest full one (etcd-backup-restore's
  // GetLatestFullSnapshotAndDeltaSnapList).
  void ObserveStore(const std::vector<StoredSnapshot>& snapshots);
  void SnapshotTaken(const StoredSnapshot& snapshot, double seconds);
  // `kind` "Full" or "Incr".
  void SnapshotFailed(const std::string& kind, double seconds, const std::string& error);
  void Collected(const std::string& kind, bool succeeded);
  void Failure(const std::string& error);
  // A scheduled round decided (and took what was due), as the leader.
  void RoundRun();

  // The Prometheus text exposition format (version 0.0.4).
  std::string Text() const;

 private:
  static constexpr size_t kBuckets = 11;
  struct Histogram {
    std::array<uint64_t, kBuckets> buckets{};  // cumulative counts by upper bound
    double sum = 0;
    uint64_t count = 0;
  };
  struct Kind {
    double latest_revision = 0;
    double latest_timestamp = 0;
    double required = 0;
    Histogram failed, succeeded;
    double collected_failed = 0, collected_succeeded = 0;
  };
  Kind& Of(const std::string& kind) { return kind == "Full" ? full_ : incr_; }

  mutable std::mutex mutex_;
  Kind full_, incr_;
  double latest_deltas_ = 0, latest_deltas_revisions_ = 0, rounds_ = 0;
  std::map<std::string, double> failures_{{"", 0}};
};

}  // namespace ruleplane
